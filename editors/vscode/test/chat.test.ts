// The chat page's model, its Markdown rendering and its Content-Security-Policy.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { costLine, Conversation, emptyState, HistoryTurn, oldestTurn, receive, running } from '../src/webview/state';
import { highlight, markdownToHtml } from '../src/webview/render';
import { chatHtml, csp, newNonce } from '../src/page';

const turn = (id: string, answer: string): HistoryTurn => ({
  turn: id,
  startedAt: 1,
  status: 'completed',
  provider: 'openai-chat',
  model: 'gpt-4.1',
  inputTokens: 1200,
  cachedTokens: 1024,
  outputTokens: 40,
  costUsd: 0.0031,
  entries: [
    { kind: 'user', text: `question ${id}` },
    { kind: 'tool_call', text: '{"path": "src/lib.rs"}', tool: 'read_file' },
    { kind: 'tool_result', text: '…' },
    { kind: 'assistant', text: answer },
  ],
});

test('history, scroll-back and live notifications make one ordered conversation', () => {
  const c = new Conversation();
  const first = [turn('t2', 'two'), turn('t3', 'three')];
  c.addHistory(first, 2);
  let s = receive(emptyState(), { type: 'reset', turns: c.view(first, 2), moreBefore: c.moreBefore });
  assert.equal(s.moreBefore, true);
  assert.deepEqual(s.turns[0].tools, [{ name: 'read_file', summary: 'read src/lib.rs' }]);
  assert.equal(oldestTurn(s), 't2');
  const older = [turn('t1', 'one'), turn('t2', 'dup')];
  c.addHistory(older, 20);
  s = receive(s, { type: 'older', turns: c.older(older), moreBefore: c.moreBefore });
  assert.deepEqual(s.turns.map((t) => t.id), ['t1', 't2', 't3']);
  assert.equal(s.turns[1].answer, 'two', 'a turn already shown is not replaced by an older page');
  assert.equal(s.moreBefore, false, 'fewer than asked: nothing older');

  const live = (e: any) => {
    const id = c.onEvent(e);
    s = receive(s, { type: 'turn', turn: c.turn(id)! });
  };
  live({ method: 'mira/turnStarted', params: { turn: 't4', question: 'why?' } });
  live({ method: 'mira/delta', params: { turn: 't4', text: 'Because ' } });
  live({ method: 'mira/delta', params: { turn: 't4', text: 'of `foo`.' } });
  live({ method: 'mira/toolCall', params: { turn: 't4', name: 'grep', summary: 'grep "foo"' } });
  live({ method: 'mira/delta', params: { turn: 't4', text: '`foo` is hot.' } });
  assert.equal(running(s)?.id, 't4');
  live({ method: 'mira/turnFinished', params: { turn: 't4', status: 'completed', usage: { inputTokens: 2500, cachedTokens: 0, outputTokens: 12 }, costUsd: 0.0123 } });
  const t4 = s.turns[3];
  assert.equal(t4.answer, 'Because of `foo`.\n\n`foo` is hot.', 'steps split by a tool call, as history joins them');
  assert.equal(t4.status, 'completed');
  assert.equal(running(s), undefined);
  assert.equal(costLine(t4), '$0.01 · 2.5k in · 12 out');
  assert.equal(costLine(s.turns[0]), '$0.0031 · 1.2k in (1k cached) · 40 out');
});

test('Markdown renders with highlighted code blocks that carry their raw code', () => {
  const html = markdownToHtml('Use **this**:\n\n```rust\nfn main() { let x = "<b>"; }\n```\n');
  assert.match(html, /<strong>this<\/strong>/);
  assert.match(html, /<pre class="code" data-code="fn main\(\) \{ let x = &#34;&#60;b&#62;&#34;; \}">/);
  assert.match(html, /<span class="hljs-keyword">fn<\/span>/);
  assert.ok(!html.includes('"<b>"'), 'code is escaped');
  assert.equal(highlight('<script>', 'no-such-language'), '&#60;script&#62;');
  assert.match(markdownToHtml('| a | b |\n|---|---|\n| 1 | 2 |'), /<table>/, 'GFM tables');
});

test('the page has a strict Content-Security-Policy: nonce scripts only, no inline styles', () => {
  const nonce = newNonce();
  assert.match(nonce, /^[A-Za-z0-9]{32}$/);
  assert.notEqual(nonce, newNonce());
  const policy = csp({ cspSource: 'https://x.vscode-cdn.net', nonce });
  assert.equal(policy, `default-src 'none'; style-src https://x.vscode-cdn.net; script-src 'nonce-${nonce}'; img-src https://x.vscode-cdn.net data:; font-src https://x.vscode-cdn.net`);
  assert.ok(!policy.includes('unsafe'));
  const html = chatHtml({ cspSource: 'https://x.vscode-cdn.net', nonce, script: 'https://x/chat.js', style: 'https://x/chat.css' });
  assert.ok(html.includes(`<script nonce="${nonce}" src="https://x/chat.js"></script>`));
  assert.equal((html.match(/<script/g) ?? []).length, 1, 'one script, from a file');
  assert.ok(!/ style=|<style/.test(html), 'no inline style');
  assert.ok(!/ on[a-z]+=/.test(html), 'no inline handlers');
});
