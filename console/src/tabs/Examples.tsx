import { createResource, createSignal, For } from 'solid-js';
import { api } from '../api';
import { latest } from '../ui/Async';
import { CodeBlock, Segmented } from '../ui/CodeBlock';
import { AGENTS, agentSnippet, type Agent } from './agent-snippets';
import { genaiSnippet, KEY_KINDS, providerKeySnippet, type KeyKind } from './gemini-bedrock-snippets';
import { rich, t } from '../i18n';
import type { en } from '../i18n/en';

type CardId = keyof typeof en.examples.cards;

type Lang = 'curl' | 'python' | 'node';
const LANGS: { id: Lang; label: string }[] = [{ id: 'curl', label: 'curl' }, { id: 'python', label: 'Python' }, { id: 'node', label: 'Node.js' }];

/** Snippets read the key from an environment variable: an Owner key pasted into code tends to leak. */
export const KEY_VAR = 'SWITCHYARD_API_KEY';
/** The admin calls' key: the Owner's, from the environment too. */
const OWNER_KEY_VAR = 'SWITCHYARD_OWNER_KEY';

export function openAiSnippet(lang: Lang, base: string, model: string): string {
  const m = JSON.stringify(model);
  switch (lang) {
    case 'curl':
      return `curl ${base}/v1/chat/completions \\
  -H "Authorization: Bearer $${KEY_VAR}" \\
  -H "Content-Type: application/json" \\
  -d '{
    "model": ${m},
    "messages": [{"role": "user", "content": "Hello!"}]
  }'`;
    case 'python':
      return `import os
from openai import OpenAI

client = OpenAI(base_url="${base}/v1", api_key=os.environ["${KEY_VAR}"])
reply = client.chat.completions.create(
    model=${m},
    messages=[{"role": "user", "content": "Hello!"}],
)
print(reply.choices[0].message.content)`;
    case 'node':
      return `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}/v1', apiKey: process.env.${KEY_VAR} });
const reply = await client.chat.completions.create({
  model: ${m},
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(reply.choices[0].message.content);`;
  }
}

export function anthropicSnippet(lang: Lang, base: string, model: string): string {
  const m = JSON.stringify(model);
  switch (lang) {
    case 'curl':
      return `curl ${base}/v1/messages \\
  -H "x-api-key: $${KEY_VAR}" \\
  -H "anthropic-version: 2023-06-01" \\
  -H "Content-Type: application/json" \\
  -d '{
    "model": ${m},
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "Hello!"}]
  }'`;
    case 'python':
      return `import os
from anthropic import Anthropic

client = Anthropic(base_url="${base}", api_key=os.environ["${KEY_VAR}"])
message = client.messages.create(
    model=${m},
    max_tokens=1024,
    messages=[{"role": "user", "content": "Hello!"}],
)
print(message.content[0].text)`;
    case 'node':
      return `import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({ baseURL: '${base}', apiKey: process.env.${KEY_VAR} });
const message = await client.messages.create({
  model: ${m},
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(message.content[0].type === 'text' ? message.content[0].text : message.content);`;
  }
}

/** Gemini's own format: the model is in the path, the key in `x-goog-api-key`; Google's SDKs take the gateway as their base URL. */
function geminiSnippet(lang: Lang, base: string, model: string): string {
  switch (lang) {
    case 'curl':
      return `curl ${base}/v1beta/models/${encodeURIComponent(model)}:generateContent \\
  -H "x-goog-api-key: $${KEY_VAR}" \\
  -H "Content-Type: application/json" \\
  -d '{"contents": [{"parts": [{"text": "Hello!"}]}]}'`;
    case 'python':
      return `import os
from google import genai
from google.genai import types

client = genai.Client(api_key=os.environ["${KEY_VAR}"], http_options=types.HttpOptions(base_url="${base}"))
reply = client.models.generate_content(model=${JSON.stringify(model)}, contents="Hello!")
print(reply.text)`;
    case 'node':
      return genaiSnippet(base, `process.env.${KEY_VAR}`, model);
  }
}

/** Snippets for the routes beyond chat: one function per route, curl / Python / Node.js with the openai SDKs. */
function imagesSnippet(lang: Lang, base: string, model: string): string {
  const m = JSON.stringify(model);
  switch (lang) {
    case 'curl':
      return `curl ${base}/v1/images/generations \\
  -H "Authorization: Bearer $${KEY_VAR}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": ${m}, "prompt": "A lighthouse at dusk", "size": "1024x1024"}'`;
    case 'python':
      return `import os
from openai import OpenAI

client = OpenAI(base_url="${base}/v1", api_key=os.environ["${KEY_VAR}"])
image = client.images.generate(model=${m}, prompt="A lighthouse at dusk", size="1024x1024")
print(image.data[0].url or len(image.data[0].b64_json))`;
    case 'node':
      return `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}/v1', apiKey: process.env.${KEY_VAR} });
const image = await client.images.generate({ model: ${m}, prompt: 'A lighthouse at dusk', size: '1024x1024' });
console.log(image.data[0].url ?? image.data[0].b64_json?.length);`;
  }
}

function transcriptionSnippet(lang: Lang, base: string, model: string): string {
  const m = JSON.stringify(model);
  switch (lang) {
    case 'curl':
      return `curl ${base}/v1/audio/transcriptions \\
  -H "Authorization: Bearer $${KEY_VAR}" \\
  -F file=@speech.mp3 \\
  -F model=${model}`;
    case 'python':
      return `import os
from openai import OpenAI

client = OpenAI(base_url="${base}/v1", api_key=os.environ["${KEY_VAR}"])
with open("speech.mp3", "rb") as audio:
    print(client.audio.transcriptions.create(model=${m}, file=audio).text)`;
    case 'node':
      return `import fs from 'node:fs';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}/v1', apiKey: process.env.${KEY_VAR} });
const text = await client.audio.transcriptions.create({ model: ${m}, file: fs.createReadStream('speech.mp3') });
console.log(text.text);`;
  }
}

function speechSnippet(lang: Lang, base: string, model: string): string {
  const m = JSON.stringify(model);
  switch (lang) {
    case 'curl':
      return `curl ${base}/v1/audio/speech \\
  -H "Authorization: Bearer $${KEY_VAR}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": ${m}, "voice": "alloy", "input": "Hello!"}' \\
  --output hello.mp3`;
    case 'python':
      return `import os
from openai import OpenAI

client = OpenAI(base_url="${base}/v1", api_key=os.environ["${KEY_VAR}"])
with client.audio.speech.with_streaming_response.create(model=${m}, voice="alloy", input="Hello!") as reply:
    reply.stream_to_file("hello.mp3")`;
    case 'node':
      return `import fs from 'node:fs';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}/v1', apiKey: process.env.${KEY_VAR} });
const reply = await client.audio.speech.create({ model: ${m}, voice: 'alloy', input: 'Hello!' });
fs.writeFileSync('hello.mp3', Buffer.from(await reply.arrayBuffer()));`;
  }
}

function realtimeSnippet(lang: Lang, base: string, model: string): string {
  const ws = base.replace(/^http/, 'ws');
  switch (lang) {
    case 'curl':
      return `# A WebSocket: with websocat (https://github.com/vi/websocat)
websocat -H "Authorization: Bearer $${KEY_VAR}" "${ws}/v1/realtime?model=${encodeURIComponent(model)}"
{"type": "response.create"}`;
    case 'python':
      return `import os, asyncio
from openai import AsyncOpenAI

async def main():
    client = AsyncOpenAI(base_url="${base}/v1", websocket_base_url="${ws}/v1", api_key=os.environ["${KEY_VAR}"])
    async with client.realtime.connect(model=${JSON.stringify(model)}) as conn:
        await conn.response.create()
        async for event in conn:
            print(event.type)
            if event.type == "response.done":
                break

asyncio.run(main())`;
    case 'node':
      return `import WebSocket from 'ws';

// Browsers pass the key as the subprotocol "openai-insecure-api-key.<key>" instead.
const ws = new WebSocket('${ws}/v1/realtime?model=${encodeURIComponent(model)}', { headers: { Authorization: \`Bearer \${process.env.${KEY_VAR}}\` } });
ws.on('open', () => ws.send(JSON.stringify({ type: 'response.create' })));
ws.on('message', (data) => {
  const event = JSON.parse(data.toString());
  console.log(event.type);
  if (event.type === 'response.done') ws.close();
});`;
  }
}

function rerankSnippet(lang: Lang, base: string, model: string): string {
  const m = JSON.stringify(model);
  switch (lang) {
    case 'curl':
      return `curl ${base}/v1/rerank \\
  -H "Authorization: Bearer $${KEY_VAR}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": ${m}, "query": "green tea", "documents": ["black coffee", "green tea leaves"], "top_n": 1}'`;
    case 'python':
      return `import os, requests

r = requests.post("${base}/v1/rerank", headers={"Authorization": f"Bearer {os.environ['${KEY_VAR}']}"},
                  json={"model": ${m}, "query": "green tea", "documents": ["black coffee", "green tea leaves"], "top_n": 1})
print(r.json()["results"])`;
    case 'node':
      return `const r = await fetch('${base}/v1/rerank', {
  method: 'POST',
  headers: { Authorization: \`Bearer \${process.env.${KEY_VAR}}\`, 'Content-Type': 'application/json' },
  body: JSON.stringify({ model: ${m}, query: 'green tea', documents: ['black coffee', 'green tea leaves'], top_n: 1 }),
});
console.log((await r.json()).results);`;
  }
}

export function SnippetCard(props: { id: CardId; endpoint: string; method?: string; defaultModel: string; models: string[]; snippet: (lang: Lang, base: string, model: string) => string }) {
  const [lang, setLang] = createSignal<Lang>('curl');
  const [model, setModel] = createSignal(props.defaultModel);
  const code = () => props.snippet(lang(), location.origin, model().trim() || props.defaultModel);
  const title = () => t(`examples.cards.${props.id}`);
  return (
    <section class="card" data-testid={`snippet-${props.id}`}>
      <div class="card-head">
        <div class="card-title">
          <h2>{title()}</h2>
          <p class="endpoint">{props.method ?? 'POST'} {location.origin}{props.endpoint}</p>
        </div>
        <Segmented label={t('examples.languageOf', { title: title() })} options={LANGS} value={lang()} onChange={setLang} />
      </div>
      <div class="inline-field">
        <label for={`${props.id}-model`}>{t('examples.model')}</label>
        <input id={`${props.id}-model`} list={`${props.id}-models`} value={model()} onInput={(e) => setModel(e.currentTarget.value)} />
        <datalist id={`${props.id}-models`}>
          <For each={props.models}>{(m) => <option value={m} />}</For>
        </datalist>
      </div>
      <CodeBlock label={LANGS.find((l) => l.id === lang())?.label} code={code} />
    </section>
  );
}

/** Claude Code, Codex and Gemini CLI pointed at this gateway (the README's quick start, step 7). */
export function AgentsCard() {
  const [agent, setAgent] = createSignal<Agent>('claude');
  const code = () => agentSnippet(agent(), location.origin, `$${KEY_VAR}`);
  return (
    <section class="card" data-testid="snippet-agents">
      <div class="card-head">
        <div class="card-title">
          <h2>{t('examples.agents')}</h2>
          <p class="endpoint">{t('examples.agentsEndpoint', { origin: location.origin })}</p>
        </div>
        <Segmented label={t('examples.agent')} options={AGENTS} value={agent()} onChange={setAgent} />
      </div>
      <CodeBlock label={AGENTS.find((a) => a.id === agent())?.label} code={code} />
    </section>
  );
}

/** The Owner's call that adds a Gemini API or AWS Bedrock provider key (the README's step 8). */
function ProviderKeysCard() {
  const [kind, setKind] = createSignal<KeyKind>('bedrock');
  const code = () => providerKeySnippet(kind(), location.origin, `$${OWNER_KEY_VAR}`);
  return (
    <section class="card" data-testid="snippet-provider-keys">
      <div class="card-head">
        <div class="card-title">
          <h2>{t('examples.providerKeys')}</h2>
          <p class="endpoint">{t('examples.providerKeysEndpoint', { origin: location.origin })}</p>
        </div>
        <Segmented label={t('examples.provider')} options={KEY_KINDS} value={kind()} onChange={setKind} />
      </div>
      <CodeBlock label={KEY_KINDS.find((k) => k.id === kind())?.label} code={code} />
    </section>
  );
}

export function ExamplesTab() {
  // The model list only feeds suggestions: the snippets work without it.
  const [models] = createResource(async () => {
    try {
      return (await api.dashboard.models.query()).data.map((m) => m.id);
    } catch {
      return [];
    }
  });
  const names = () => latest(models) ?? [];
  return (
    <div class="stack">
      <div class="page-head">
        <h1>{t('examples.title')}</h1>
        <p class="muted">
          {rich(t('examples.intro'), { var: <code>{KEY_VAR}</code> })}{' '}
          {rich(t('examples.models'), { call: <code>GET {location.origin}/v1/models</code> })}
        </p>
      </div>
      <SnippetCard id="openai" endpoint="/v1/chat/completions" defaultModel="gpt-4o-mini" models={names()} snippet={openAiSnippet} />
      <SnippetCard id="anthropic" endpoint="/v1/messages" defaultModel="claude-sonnet-4-5" models={names()} snippet={anthropicSnippet} />
      <SnippetCard id="gemini" endpoint="/v1beta/models/{model}:generateContent" defaultModel="gemini-2.5-flash" models={names()} snippet={geminiSnippet} />
      <AgentsCard />
      <ProviderKeysCard />
      <SnippetCard id="images" endpoint="/v1/images/generations" defaultModel="dall-e-3" models={names()} snippet={imagesSnippet} />
      <SnippetCard id="transcription" endpoint="/v1/audio/transcriptions" defaultModel="whisper-1" models={names()} snippet={transcriptionSnippet} />
      <SnippetCard id="speech" endpoint="/v1/audio/speech" defaultModel="tts-1" models={names()} snippet={speechSnippet} />
      <SnippetCard id="realtime" endpoint="/v1/realtime" method={t('examples.webSocket')} defaultModel="gpt-realtime" models={names()} snippet={realtimeSnippet} />
      <SnippetCard id="rerank" endpoint="/v1/rerank" defaultModel="rerank-v3.5" models={names()} snippet={rerankSnippet} />
    </div>
  );
}
