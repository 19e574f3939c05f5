import { createHash } from 'node:crypto';

/** Deterministic bytes standing in for an audio or image file. */
export function fileBytes(n: number, seed = 7): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * seed + (i >> 8)) & 0xff;
  return b;
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export type FormPart = { name: string; value: string } | { name: string; filename: string; data: Buffer; type?: string };

/** A multipart/form-data body written by hand, so the order of its parts is the caller's. */
export function multipartBody(parts: FormPart[], boundary = 'test-boundary-1'): { body: Buffer; type: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if ('value' in p) chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
    else chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: ${p.type ?? 'audio/mpeg'}\r\n\r\n`), p.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
}
