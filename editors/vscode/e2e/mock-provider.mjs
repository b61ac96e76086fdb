// A loopback model server for the end-to-end test, speaking OpenAI Chat Completions with SSE
// streaming (chunks, tool_calls split over several deltas, a usage chunk, [DONE]) as the real
// API does. It answers by a script keyed on the conversation it receives and records every
// request so the test can check what Mira sent.
import http from 'node:http';

const CREATED = 1767225600;
/** What `GET /v1/models` lists. */
export const MODELS = ['gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'local-e2e-model'];

function chunk(delta, finish = null) {
  return { id: 'chatcmpl-e2e', object: 'chat.completion.chunk', created: CREATED, model: 'gpt-4.1', system_fingerprint: 'fp_e2e', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null };
}

/** One scripted answer as SSE frames: text deltas and/or tool calls. */
export function frames({ text = [], calls = [], usage = { prompt: 1800, cached: 1024, completion: 60 } }) {
  const out = [chunk({ role: 'assistant', content: '' })];
  for (const t of text) out.push(chunk({ content: t }));
  calls.forEach(([id, name, args], index) => {
    out.push(chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }));
    const mid = Math.floor(args.length / 2);
    for (const piece of [args.slice(0, mid), args.slice(mid)]) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  out.push(chunk({}, calls.length ? 'tool_calls' : 'stop'));
  out.push({ id: 'chatcmpl-e2e', object: 'chat.completion.chunk', created: CREATED, model: 'gpt-4.1', choices: [], usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion, prompt_tokens_details: { cached_tokens: usage.cached, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } } });
  return out.map((f) => `data: ${JSON.stringify(f)}\n\n`).concat('data: [DONE]\n\n');
}

/**
 * Starts the server on 127.0.0.1 (a free port). `script(body)` returns the answer for a request
 * body: {text?: string[], calls?: [id, name, argsJson][], delayMs?, gapMs?} (delayMs: before the
 * first frame; gapMs: between frames, else the server's). Resolves to {url, requests, close}.
 */
export function startMockProvider(script, { gapMs = 60 } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', async () => {
      // The model list, as an OpenAI-compatible server gives it ("Mira: Choose Model").
      if (req.method === 'GET' && req.url.endsWith('/v1/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: MODELS.map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'e2e' })) }));
        return;
      }
      if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } }));
        return;
      }
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400).end('{"error":{"message":"bad json"}}');
        return;
      }
      requests.push({ headers: req.headers, body });
      if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'missing API key', type: 'invalid_request_error' } }));
        return;
      }
      const answer = script(body);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.on('error', () => {});
      // An answer may wait before its first frame (time to first token) and set its own pace.
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      for (const f of frames(answer)) {
        // The client hung up (a cancelled turn): stop, as a real provider does.
        if (res.destroyed || res.writableEnded) return;
        res.write(f);
        await new Promise((r) => setTimeout(r, answer.gapMs ?? gapMs));
      }
      res.end();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/** The text of the last message of a request, whatever its content shape. */
export function lastMessage(body) {
  const m = body.messages?.at(-1);
  if (!m) return { role: '', text: '' };
  const text = typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join('');
  return { role: m.role, text };
}

/**
 * A fill-in-the-middle request from Mira's chat completion provider (the user message marks the
 * cursor with <CURSOR> inside <file …>…</file>): the code before and after the cursor, else null.
 */
export function fimPrompt(body) {
  const { role, text } = lastMessage(body);
  const file = /<file name="[^"]*">\n([\s\S]*)\n<\/file>/.exec(text);
  if (role !== 'user' || !file || !file[1].includes('<CURSOR>')) return null;
  const [prefix, suffix] = file[1].split('<CURSOR>');
  return { prefix, suffix };
}
