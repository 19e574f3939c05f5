/** The account key from `Authorization: Bearer …`, or `x-api-key` as Anthropic clients send it, or `x-goog-api-key` as Google's do. */
export function credentialFrom(headers: Record<string, string>): string | null {
  const auth = headers['authorization'];
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1] : null;
  }
  const xKey = headers['x-api-key'] ?? headers['x-goog-api-key'];
  return xKey ? xKey.trim() || null : null;
}
