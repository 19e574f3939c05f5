import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { mockId, sleep, type Behaviour } from './common';

/** The mock's audio rate: 24 kHz 16-bit mono PCM, 48,000 bytes a second, 10 audio tokens a second. */
export const PCM_BYTES_PER_TOKEN = 4800;
/** Audio bytes in each `response.output_audio.delta` and how many a response sends (unless the behaviour says `chunks`). */
export const AUDIO_DELTA_BYTES = 9600;

export interface RealtimeRecord {
  credential: string | null;
  model: string | null;
  headers: Record<string, string>;
  /** Events the client sent, by type. */
  received: string[];
  /** Bytes the mock has queued towards the gateway (it stops reading when its client lags). */
  buffered(): number;
}

/**
 * `GET /v1/realtime` upgraded to a WebSocket, in OpenAI's realtime event format: `session.created`
 * at once, `session.updated` for a `session.update`, appended audio counted per
 * `input_audio_buffer.append`, and for each `response.create` a `response.created`, audio and
 * transcript deltas and a `response.done` whose usage counts the audio heard (10 tokens a
 * second), the instructions as text, and the audio and text sent. A behaviour's `status`
 * refuses the upgrade with that HTTP status; `chunks` and `chunkDelayMs` pace the audio.
 */
export function attachRealtime(server: Server, behaviourOf: (credential: string | null, model: string) => Behaviour, records: RealtimeRecord[]): void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const u = new URL(req.url ?? '/', 'http://mock');
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const credential = bearer?.[1] ?? (req.headers['api-key'] as string | undefined) ?? null;
    const model = u.searchParams.get('model');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
    let open: WebSocket | null = null;
    const rec: RealtimeRecord = { credential, model, headers, received: [], buffered: () => open?.bufferedAmount ?? 0 };
    records.push(rec);
    const b = behaviourOf(credential, model ?? '');
    const refuse = (status: number) => {
      socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":{"message":"mock refusal (${status})","type":"invalid_request_error"}}`);
    };
    if (!u.pathname.endsWith('/v1/realtime')) return refuse(404);
    if (!credential) return refuse(401);
    if (b.status && b.status >= 400) return refuse(b.status);
    wss.handleUpgrade(req, socket, head, (ws) => {
      open = ws;
      session(ws, model ?? 'unknown-model', b, rec);
    });
  });
}

function session(ws: WebSocket, model: string, b: Behaviour, rec: RealtimeRecord): void {
  const send = (event: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: mockId('event_'), ...event }));
  let instructions = '';
  let audioBytes = 0;
  let busy = Promise.resolve();
  send({ type: 'session.created', session: { id: mockId('sess_'), object: 'realtime.session', model } });
  ws.on('message', (data) => {
    let ev: any;
    try { ev = JSON.parse(data.toString('utf8')); } catch { return; }
    rec.received.push(ev.type);
    switch (ev.type) {
      case 'session.update':
        if (typeof ev.session?.instructions === 'string') instructions = ev.session.instructions;
        send({ type: 'session.updated', session: { model, ...ev.session } });
        break;
      case 'input_audio_buffer.append':
        audioBytes += Buffer.from(String(ev.audio ?? ''), 'base64').length;
        break;
      case 'input_audio_buffer.commit':
        send({ type: 'input_audio_buffer.committed', item_id: mockId('item_') });
        break;
      case 'response.create': {
        const heard = audioBytes;
        audioBytes = 0;
        busy = busy.then(() => respond(ws, send, model, instructions, heard, b));
        break;
      }
    }
  });
}

async function respond(ws: WebSocket, send: (e: Record<string, unknown>) => void, model: string, instructions: string, heard: number, b: Behaviour): Promise<void> {
  const id = mockId('resp_');
  send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress', output: [] } });
  const deltas = b.chunks ?? 3;
  const text = b.text ?? `Mock realtime answer from ${model}.`;
  for (let i = 0; i < deltas; i++) {
    if (ws.readyState !== ws.OPEN) return;
    if (i > 0 && b.chunkDelayMs) await sleep(b.chunkDelayMs);
    send({ type: 'response.output_audio.delta', response_id: id, item_id: 'item_out', output_index: 0, content_index: 0, delta: Buffer.alloc(AUDIO_DELTA_BYTES, i).toString('base64') });
  }
  send({ type: 'response.output_audio_transcript.delta', response_id: id, delta: text });
  const audioIn = Math.ceil(heard / PCM_BYTES_PER_TOKEN);
  const textIn = Math.max(1, Math.ceil(instructions.length / 4));
  const audioOut = Math.ceil((deltas * AUDIO_DELTA_BYTES) / PCM_BYTES_PER_TOKEN);
  const textOut = Math.max(1, Math.ceil(text.length / 4));
  const cached = b.usage?.cached_tokens ?? 0;
  send({
    type: 'response.done',
    response: {
      id, object: 'realtime.response', status: 'completed',
      usage: {
        total_tokens: textIn + audioIn + textOut + audioOut, input_tokens: textIn + audioIn, output_tokens: textOut + audioOut,
        input_token_details: { text_tokens: textIn, audio_tokens: audioIn, cached_tokens: cached, cached_tokens_details: { text_tokens: Math.min(cached, textIn), audio_tokens: Math.max(0, cached - textIn) } },
        output_token_details: { text_tokens: textOut, audio_tokens: audioOut },
      },
    },
  });
}
