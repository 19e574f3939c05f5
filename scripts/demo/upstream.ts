/**
 * `npm run demo:upstream`: a stand-in AI provider for a first try without network or a real
 * provider key. It is the tests' mock upstream (server/testing/mock-upstream.ts): it answers
 * OpenAI-format chat completions, responses and embeddings and Anthropic-format messages, with
 * canned text and token usage, for any key. In real use, register your provider's URL and key.
 *
 * The mock listens on a random loopback port; a plain TCP relay gives it the fixed address the
 * README uses (DEMO_UPSTREAM_PORT, default 9999).
 */
import net from 'node:net';
import { startMockUpstream } from '../../server/testing/mock-upstream';

const HOST = '127.0.0.1';
const port = Number(process.env.DEMO_UPSTREAM_PORT ?? 9999);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write(`demo:upstream: DEMO_UPSTREAM_PORT must be a port number (1-65535), not ${process.env.DEMO_UPSTREAM_PORT}\n`);
  process.exit(1);
}

const mock = await startMockUpstream();
const target = new URL(mock.url);
const sockets = new Set<net.Socket>();
const relay = net.createServer((client) => {
  const upstream = net.connect(Number(target.port), target.hostname);
  for (const s of [client, upstream]) {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    // A reset on one side closes the other; the error itself needs no report.
    s.on('error', () => { client.destroy(); upstream.destroy(); });
  }
  client.pipe(upstream).pipe(client);
});

relay.once('error', (err: NodeJS.ErrnoException) => {
  process.stderr.write(err.code === 'EADDRINUSE'
    ? `demo:upstream: ${HOST}:${port} is in use; stop what listens there or set DEMO_UPSTREAM_PORT\n`
    : `demo:upstream: ${err.message}\n`);
  void mock.close().then(() => process.exit(1));
});
relay.listen(port, HOST, () => {
  process.stdout.write([
    '',
    `  Demo upstream listening on http://${HOST}:${port}`,
    '    OpenAI format: /v1/chat/completions, /v1/responses, /v1/embeddings; Anthropic format: /v1/messages',
    '    Canned answers with token usage, for any key. For a first try only: in real use, register',
    '    your provider\'s URL and key instead.',
    '',
  ].join('\n') + '\n');
});

// The mock records every request for the tests' assertions; a long-running demo needs none of them.
setInterval(() => { mock.requests.length = 0; }, 10_000).unref();

const stop = () => {
  relay.close();
  for (const s of sockets) s.destroy();
  void mock.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
