import type { AnyRouter } from '@trpc/server';

const COERCIBLE = new Set(['number', 'boolean', 'bigint', 'date']);
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch']);

/**
 * trpc-to-openapi turns on zod coercion for every top-level number/boolean of every input,
 * bodies included, so `"Status": "false"` would become `true`. Query strings need coercion;
 * JSON bodies must keep their types, so body procedures' fields are locked against it.
 */
export function lockBodyCoercion(router: AnyRouter): void {
  const seen = new Set<unknown>();
  for (const procedure of Object.values(router._def.procedures) as any[]) {
    const method = procedure._def.meta?.openapi?.method;
    if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') continue;
    for (const input of procedure._def.inputs ?? []) lockSchema(input, seen);
  }
}

function lockSchema(schema: any, seen: Set<unknown>): void {
  const def = schema?._zod?.def;
  if (!def || seen.has(def)) return;
  seen.add(def);
  if (COERCIBLE.has(def.type)) {
    if (Object.getOwnPropertyDescriptor(def, 'coerce')?.get) return;
    Object.defineProperty(def, 'coerce', { get: () => false, set: () => {}, configurable: false });
    return;
  }
  if (WRAPPERS.has(def.type)) return lockSchema(def.innerType, seen);
  if (def.type === 'object') for (const s of Object.values(def.shape)) lockSchema(s, seen);
  if (def.type === 'pipe') { lockSchema(def.in, seen); lockSchema(def.out, seen); }
  if (def.type === 'union') for (const o of def.options) lockSchema(o, seen);
  if (def.type === 'array') lockSchema(def.element, seen);
  if (def.type === 'record') lockSchema(def.valueType, seen);
}
