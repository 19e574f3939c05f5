// Preloaded into @portkey-ai/gateway 1.15.2 for the proxy benchmark (node --import).
// 1. Its CLI has no host flag and listens on every interface: pin listen() to loopback.
// 2. Streaming answers 500 `TypeError: immutable` (it appends to the fetch Response's
//    immutable Headers via @hono/node-server); re-wrap fetch responses with mutable headers.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && args[1] === undefined) args[1] = '127.0.0.1';
  else if (typeof args[0] === 'number' && typeof args[1] === 'function') args.splice(1, 0, '127.0.0.1');
  else if (args[0] && typeof args[0] === 'object' && !args[0].host && !args[0].path) args[0] = { ...args[0], host: '127.0.0.1' };
  return listen.apply(this, args);
};

const upstreamFetch = globalThis.fetch;
globalThis.fetch = async (...a) => {
  const r = await upstreamFetch(...a);
  return new Response(r.body, { status: r.status, statusText: r.statusText, headers: new Headers(r.headers) });
};
