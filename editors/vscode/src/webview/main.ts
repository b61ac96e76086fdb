// The chat page (runs inside the webview). Holds the chat state, renders it, and talks to
// the extension host only through postMessage: it never sees the server or the network.
import DOMPurify from 'dompurify';
import { markdownToHtml } from './render';
import type { FromPage, ToPage } from './protocol';
import { applyEvent, ChatState, ChatTurn, costLine, emptyState, oldestTurn, prependHistory, running } from './state';

declare function acquireVsCodeApi(): { postMessage(m: FromPage): void };
const vscode = acquireVsCodeApi();
const post = (m: FromPage) => vscode.postMessage(m);

const log = document.getElementById('log') as HTMLElement;
const older = document.getElementById('older') as HTMLElement;
const form = document.getElementById('ask') as HTMLFormElement;
const input = document.getElementById('question') as HTMLTextAreaElement;
const withContext = document.getElementById('with-context') as HTMLInputElement;
const contextLabel = document.getElementById('context-label') as HTMLElement;
const cancel = document.getElementById('cancel') as HTMLButtonElement;
const errorBox = document.getElementById('error') as HTMLElement;

let state: ChatState = emptyState();
let loadingOlder = false;
const rendered = new Map<string, HTMLElement>();

function el(tag: string, cls?: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function codeButtons(root: HTMLElement) {
  root.querySelectorAll<HTMLElement>('pre.code').forEach((pre) => {
    const code = pre.dataset.code ?? '';
    const bar = el('div', 'code-actions');
    const copy = el('button', 'code-copy', 'Copy') as HTMLButtonElement;
    copy.title = 'Copy this code';
    copy.addEventListener('click', () => post({ type: 'copy', text: code }));
    const insert = el('button', 'code-insert', 'Insert at cursor') as HTMLButtonElement;
    insert.title = 'Insert this code at the cursor of the last active editor';
    insert.addEventListener('click', () => post({ type: 'insert', text: code }));
    bar.append(copy, insert);
    pre.prepend(bar);
  });
}

function renderTurn(t: ChatTurn): HTMLElement {
  const article = el('article', `turn status-${t.status}`);
  article.dataset.turn = t.id;
  if (t.question) article.append(el('div', 'question', t.question));
  if (t.tools.length) {
    const chips = el('div', 'tools');
    for (const tool of t.tools) {
      const chip = el('span', 'chip', tool.summary || tool.name);
      chip.title = tool.name;
      chips.append(chip);
    }
    article.append(chips);
  }
  const answer = el('div', 'answer');
  answer.innerHTML = DOMPurify.sanitize(markdownToHtml(t.answer));
  codeButtons(answer);
  article.append(answer);
  if (t.error) article.append(el('div', 'turn-error', t.error));
  const meta = el('div', 'meta');
  if (t.status === 'running') {
    meta.append(el('span', 'spinner', 'answering…'));
    const stop = el('button', 'turn-cancel', 'Cancel') as HTMLButtonElement;
    stop.addEventListener('click', () => post({ type: 'cancel', turn: t.id }));
    meta.append(stop);
  } else {
    const what = t.status === 'completed' ? '' : `${t.status} · `;
    meta.append(el('span', 'cost', what + costLine(t)));
  }
  article.append(meta);
  return article;
}

function nearBottom(): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

/** Re-render what changed; keeps the scroll position (bottom stays bottom). */
function render(prev: ChatState) {
  const stick = nearBottom();
  const before = log.scrollHeight;
  const prevById = new Map(prev.turns.map((t) => [t.id, t]));
  let anchor: Element | null = older.nextElementSibling;
  const prepended = prev.turns.length > 0 && state.turns[0]?.id !== prev.turns[0]?.id;
  for (const t of state.turns) {
    const old = rendered.get(t.id);
    if (!old) {
      const node = renderTurn(t);
      log.insertBefore(node, anchor);
      rendered.set(t.id, node);
    } else if (prevById.get(t.id) !== t) {
      const node = renderTurn(t);
      old.replaceWith(node);
      rendered.set(t.id, node);
    }
    anchor = rendered.get(t.id)!.nextElementSibling;
  }
  older.hidden = !state.moreBefore;
  cancel.hidden = !running(state);
  if (prepended) log.scrollTop += log.scrollHeight - before;
  else if (stick) log.scrollTop = log.scrollHeight;
}

function set(next: ChatState) {
  const prev = state;
  state = next;
  render(prev);
}

window.addEventListener('message', (ev: MessageEvent<ToPage>) => {
  const m = ev.data;
  switch (m.type) {
    case 'history':
      if (m.reset) {
        rendered.forEach((n) => n.remove());
        rendered.clear();
        state = emptyState();
      }
      set(prependHistory(state, m.turns, m.asked));
      loadingOlder = false;
      if (m.reset) log.scrollTop = log.scrollHeight;
      break;
    case 'event':
      errorBox.hidden = true;
      set(applyEvent(state, m.event));
      break;
    case 'context':
      contextLabel.textContent = m.label;
      withContext.disabled = m.label === '';
      break;
    case 'error':
      errorBox.textContent = m.message;
      errorBox.hidden = false;
      loadingOlder = false;
      break;
  }
});

function loadOlder() {
  const before = oldestTurn(state);
  if (!state.moreBefore || loadingOlder || !before) return;
  loadingOlder = true;
  post({ type: 'loadOlder', before });
}

log.addEventListener('scroll', () => {
  if (log.scrollTop < 30) loadOlder();
});
older.addEventListener('click', loadOlder);

function submit() {
  const question = input.value.trim();
  if (!question) return;
  post({ type: 'ask', question, withContext: withContext.checked && !withContext.disabled });
  input.value = '';
}
form.addEventListener('submit', (e) => {
  e.preventDefault();
  submit();
});
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    submit();
  }
});
cancel.addEventListener('click', () => post({ type: 'cancel', turn: running(state)?.id }));

post({ type: 'ready' });
