import fc from 'fast-check';
import type { Schema } from './document';
import { PROTOTYPE_NAMES, anyJson, hostileNumber, hostileString, withOwnKey } from '../support/hostile';

/** Valid-looking values for fields whose format the schema only hints at (by property name). */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

/** A body or value and what was done to it, for the failure report. */
export interface Generated {
  value: unknown;
  note: string;
}

const INT_MIN = -(2 ** 53) + 1;
const INT_MAX = 2 ** 53 - 1;
const SHORT = 40;

/** fc.integer is 32-bit only; wider ranges go through bigint. */
function intIn(min: number, max: number): fc.Arbitrary<number> {
  if (min > max) return fc.constant(min);
  if (min >= -(2 ** 31) && max <= 2 ** 31 - 1) return fc.integer({ min, max });
  return fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number);
}

/**
 * JSON Schema (the OpenAPI 3.0 subset the contract emits) → fast-check arbitraries: `valid`
 * draws values the schema accepts (biased to its boundaries), `invalid` values it should
 * refuse (wrong types, one past a bound, hostile strings and numbers), `body` an object with
 * a few of its fields broken.
 */
export class SchemaArbitraries {
  constructor(private readonly deref: (s: Schema) => Schema, private readonly hints: Hints = {}) {}

  valid(schema: Schema, name?: string): fc.Arbitrary<unknown> {
    const s = this.deref(schema);
    if (s.nullable) {
      const { nullable: _, ...rest } = s;
      return fc.oneof({ weight: 4, arbitrary: this.valid(rest, name) }, { weight: 1, arbitrary: fc.constant(null) });
    }
    if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
    const union = s.oneOf ?? s.anyOf;
    if (Array.isArray(union)) return fc.oneof(...union.map((o: Schema) => this.valid(o, name)));
    const hint = name !== undefined ? this.hints[name] : undefined;
    const plain = this.plainValid(s);
    return hint ? fc.oneof({ weight: 9, arbitrary: hint }, { weight: 1, arbitrary: plain }) : plain;
  }

  private plainValid(s: Schema): fc.Arbitrary<unknown> {
    switch (s.type) {
      case 'string': return this.validString(s);
      case 'integer': {
        const min = Math.max(INT_MIN, s.minimum ?? -1000);
        const max = Math.min(INT_MAX, s.maximum ?? 1_000_000);
        return fc.oneof({ weight: 3, arbitrary: intIn(min, Math.min(max, min + 10_000)) }, { weight: 2, arbitrary: intIn(min, max) }, { weight: 1, arbitrary: fc.constantFrom(min, max) });
      }
      case 'number': {
        const min = s.minimum ?? -1e6;
        const max = s.maximum ?? 1e9;
        const excl = s.exclusiveMinimum === true;
        return fc.oneof(
          fc.double({ min, max, noNaN: true, noDefaultInfinity: true, minExcluded: excl }),
          intIn(Math.ceil(excl ? min + 1 : min), Math.min(Math.floor(max), Math.ceil(min) + 1000)),
          fc.constantFrom(...(excl ? [max] : [min, max])),
        );
      }
      case 'boolean': return fc.boolean();
      case 'array': {
        const items = s.items ? this.valid(s.items) : anyJson;
        return fc.array(items, { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 5, 5) });
      }
      case 'object': return this.validObject(s);
      default:
        if (s.properties || s.additionalProperties) return this.validObject(s);
        return anyJson;
    }
  }

  private validString(s: Schema): fc.Arbitrary<string> {
    const min = s.minLength ?? 0;
    const max = s.maxLength ?? 10_000;
    const fit = (x: string) => (x.length < min ? x + 'a'.repeat(min - x.length) : x.length > max ? x.slice(0, max) : x);
    if (s.format === 'email') return fc.emailAddress().map(fit);
    if (s.format === 'uri') return fc.webUrl().map(fit);
    if (typeof s.pattern === 'string') {
      let re: RegExp;
      try { re = new RegExp(s.pattern); } catch { return fc.string({ minLength: min, maxLength: Math.min(max, SHORT) }); }
      return fc.stringMatching(re).map(fit);
    }
    return fc.oneof(
      { weight: 6, arbitrary: fc.string({ minLength: min, maxLength: Math.max(min, Math.min(max, SHORT)) }) },
      { weight: 1, arbitrary: fc.constant('x'.repeat(Math.min(max, 300_000))) },
    );
  }

  private validObject(s: Schema): fc.Arbitrary<Record<string, unknown>> {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    const required = ((s.required ?? []) as string[]).filter((k) => k in props);
    const optional = Object.keys(props).filter((k) => !required.includes(k));
    const record = (names: string[]) => (names.length
      ? fc.record(Object.fromEntries(names.map((k) => [k, this.valid(props[k], k)])))
      : fc.constant({} as Record<string, unknown>));
    // Mostly the required fields and a few optional ones (each extra field is one more chance
    // to be refused), sometimes every field.
    const few = fc.subarray(optional, { maxLength: Math.min(3, optional.length) }).chain((names) => record([...required, ...names]));
    const base = optional.length ? fc.oneof({ weight: 3, arbitrary: few }, { weight: 1, arbitrary: record(Object.keys(props)) }) : record(required);
    if (s.additionalProperties && typeof s.additionalProperties === 'object') {
      const extra = fc.dictionary(fc.oneof(fc.constantFrom('gpt-4o', 'claude-*', 'gpt-4o-mini'), fc.string({ minLength: 1, maxLength: 12 })), this.valid(s.additionalProperties), { maxKeys: 3 });
      return fc.tuple(base, extra).map(([a, b]) => ({ ...b, ...a }));
    }
    return base;
  }

  /** A value the schema should refuse (most of the time: a mutation may land on a valid value). */
  invalid(schema: Schema): fc.Arbitrary<unknown> {
    const s = this.deref(schema);
    const bounds: fc.Arbitrary<unknown>[] = [];
    if (s.type === 'string') {
      if (typeof s.maxLength === 'number' && s.maxLength < 1_000_000) bounds.push(fc.constant('y'.repeat(s.maxLength + 1)));
      if (s.minLength > 0) bounds.push(fc.constant('y'.repeat(s.minLength - 1)));
      bounds.push(hostileString, fc.constant(' '), fc.constant('\u0000'));
    }
    if (s.type === 'integer' || s.type === 'number') {
      if (typeof s.minimum === 'number') bounds.push(fc.constantFrom(s.minimum - 1, s.minimum - 1e-9));
      if (typeof s.maximum === 'number') bounds.push(fc.constantFrom(s.maximum + 1, s.maximum * 10 + 1));
      if (s.type === 'integer') bounds.push(fc.constantFrom(1.5, -0.5, 2 ** 31, 2 ** 53 + 2));
      bounds.push(hostileNumber, fc.constantFrom('1', '0', 'NaN', 'Infinity', '-Infinity', '1e999', '')); // numbers as strings: never coerced in bodies
    }
    if (s.type === 'boolean') bounds.push(fc.constantFrom('true', 'false', 1, 0, 'yes', null));
    if (s.type === 'array') bounds.push(fc.constant([]), fc.array(anyJson, { minLength: (s.maxItems ?? 5) + 1, maxLength: (s.maxItems ?? 5) + 3 }), fc.array(anyJson, { maxLength: 3 }));
    if (s.type === 'object' || s.properties) bounds.push(fc.constant([]), fc.constant('{}'), this.body(s).map((g) => g.value));
    if (Array.isArray(s.enum)) bounds.push(fc.constantFrom(...s.enum.map((e: unknown) => (typeof e === 'string' ? e.toUpperCase() + ' ' : String(e)))));
    return bounds.length ? fc.oneof({ weight: 2, arbitrary: fc.oneof(...bounds) }, { weight: 1, arbitrary: anyJson }) : anyJson;
  }

  /**
   * An object body for `schema`: valid, or valid with one to three fields broken, a required
   * one missing, an unknown or prototype-named key added.
   */
  body(schema: Schema): fc.Arbitrary<Generated> {
    const s = this.deref(schema);
    const props = Object.keys(s.properties ?? {});
    const valid = this.valid(s).map((v) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {}));
    const variants: fc.WeightedArbitrary<Generated>[] = [
      { weight: 6, arbitrary: valid.map((value) => ({ value, note: 'valid body' })) },
    ];
    if (props.length) {
      const fieldBroken = fc.tuple(valid, fc.array(fc.constantFrom(...props), { minLength: 1, maxLength: 3 })).chain(([v, names]) =>
        fc.tuple(...names.map((n) => this.invalid(s.properties[n]))).map((bad) => {
          const value = { ...v };
          names.forEach((n, i) => { value[n] = bad[i]; });
          return { value, note: `broken: ${[...new Set(names)].join(', ')}` };
        }));
      variants.push({ weight: 5, arbitrary: fieldBroken });
    }
    const required = (s.required ?? []) as string[];
    if (required.length) {
      variants.push({ weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...required)).map(([v, r]) => {
        const { [r]: _, ...rest } = v;
        return { value: rest, note: `missing required ${r}` };
      }) });
    }
    variants.push({ weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...PROTOTYPE_NAMES), anyJson).map(([v, k, x]) => ({ value: withOwnKey(v, k, x), note: `prototype key ${k}` })) });
    variants.push({ weight: 1, arbitrary: fc.tuple(valid, fc.oneof(hostileString.filter((k) => k.length < 200), fc.constantFrom('Extra', 'id', 'ID', 'OwnerID', 'DNA', 'Balance')), anyJson).map(([v, k, x]) => ({ value: withOwnKey(v, k, x), note: `unknown key ${JSON.stringify(k).slice(0, 40)}` })) });
    variants.push({ weight: 1, arbitrary: fc.constant({ value: {}, note: 'empty object' }) });
    return fc.oneof(...variants);
  }
}
