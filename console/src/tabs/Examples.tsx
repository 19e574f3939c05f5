import { createResource, createSignal, For } from 'solid-js';
import { api } from '../api';
import { latest } from '../ui/Async';
import { CopyButton } from '../ui/CopyButton';

type Lang = 'curl' | 'python' | 'node';
const LANGS: { id: Lang; label: string }[] = [{ id: 'curl', label: 'curl' }, { id: 'python', label: 'Python' }, { id: 'node', label: 'Node.js' }];

/** Snippets read the key from an environment variable: an Owner key pasted into code tends to leak. */
const KEY_VAR = 'SWITCHYARD_API_KEY';

function openAiSnippet(lang: Lang, base: string, model: string): string {
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

function anthropicSnippet(lang: Lang, base: string, model: string): string {
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

function SnippetCard(props: { id: string; title: string; endpoint: string; method?: string; defaultModel: string; models: string[]; snippet: (lang: Lang, base: string, model: string) => string }) {
  const [lang, setLang] = createSignal<Lang>('curl');
  const [model, setModel] = createSignal(props.defaultModel);
  const code = () => props.snippet(lang(), location.origin, model().trim() || props.defaultModel);
  return (
    <section class="card" data-testid={`snippet-${props.id}`}>
      <div class="card-head">
        <div class="card-title">
          <h2>{props.title}</h2>
          <p class="endpoint">{props.method ?? 'POST'} {location.origin}{props.endpoint}</p>
        </div>
        <div class="segmented" role="tablist" aria-label={`${props.title} language`}>
          <For each={LANGS}>
            {(l) => (
              <button type="button" role="tab" aria-selected={lang() === l.id} classList={{ active: lang() === l.id }} onClick={() => setLang(l.id)}>
                {l.label}
              </button>
            )}
          </For>
        </div>
      </div>
      <div class="inline-field">
        <label for={`${props.id}-model`}>Model</label>
        <input id={`${props.id}-model`} list={`${props.id}-models`} value={model()} onInput={(e) => setModel(e.currentTarget.value)} />
        <datalist id={`${props.id}-models`}>
          <For each={props.models}>{(m) => <option value={m} />}</For>
        </datalist>
      </div>
      <div class="code-block">
        <div class="code-head">
          <span>{LANGS.find((l) => l.id === lang())?.label}</span>
          <CopyButton text={code} />
        </div>
        <pre><code>{code()}</code></pre>
      </div>
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
        <h1>AI API examples</h1>
        <p class="muted">
          Point any OpenAI- or Anthropic-format client at this gateway. Give each application a subaccount key and export it as <code>{KEY_VAR}</code>.
          <code>GET {location.origin}/v1/models</code> lists the models a key may use.
        </p>
      </div>
      <SnippetCard id="openai" title="OpenAI format" endpoint="/v1/chat/completions" defaultModel="gpt-4o-mini" models={names()} snippet={openAiSnippet} />
      <SnippetCard id="anthropic" title="Anthropic format" endpoint="/v1/messages" defaultModel="claude-sonnet-4-5" models={names()} snippet={anthropicSnippet} />
      <SnippetCard id="images" title="Images" endpoint="/v1/images/generations" defaultModel="dall-e-3" models={names()} snippet={imagesSnippet} />
      <SnippetCard id="transcription" title="Audio transcription" endpoint="/v1/audio/transcriptions" defaultModel="whisper-1" models={names()} snippet={transcriptionSnippet} />
      <SnippetCard id="speech" title="Text to speech" endpoint="/v1/audio/speech" defaultModel="tts-1" models={names()} snippet={speechSnippet} />
      <SnippetCard id="realtime" title="Realtime (WebSocket)" endpoint="/v1/realtime" method="GET (WebSocket)" defaultModel="gpt-realtime" models={names()} snippet={realtimeSnippet} />
      <SnippetCard id="rerank" title="Rerank" endpoint="/v1/rerank" defaultModel="rerank-v3.5" models={names()} snippet={rerankSnippet} />
    </div>
  );
}
