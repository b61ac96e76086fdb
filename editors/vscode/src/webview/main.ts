// The chat page (runs inside the webview). Holds the chat state, renders it, and talks to
// the extension host only through postMessage: it never sees the server or the network.
import DOMPurify from 'dompurify';
import { markdownToHtml } from './render';
import type { FromPage, ToPage } from './protocol';
import { ChatState, ChatTurn, costLine, emptyState, oldestTurn, receive, running } from './state';

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

function renderTools(t: ChatTurn): HTMLElement {
  const chips = el('div', 'tools');
  chips.hidden = t.tools.length === 0;
  for (const tool of t.tools) {
    const chip = el('span', 'chip', tool.summary || tool.name);
    chip.title = tool.name;
    chips.append(chip);
  }
  return chips;
}

function renderAnswer(t: ChatTurn): HTMLElement {
  const answer = el('div', 'answer');
  answer.innerHTML = DOMPurify.sanitize(markdownToHtml(t.answer));
  codeButtons(answer);
  return answer;
}

function renderMeta(t: ChatTurn): HTMLElement {
  const meta = el('div', 'meta');
  if (t.error) meta.append(el('div', 'turn-error', t.error));
  if (t.status === 'running') {
    meta.append(el('span', 'spinner', 'answering…'));
    const stop = el('button', 'turn-cancel', 'Cancel') as HTMLButtonElement;
    stop.addEventListener('click', () => post({ type: 'cancel', turn: t.id }));
    meta.append(stop);
  } else {
    const what = t.status === 'completed' ? '' : `${t.status} · `;
    meta.append(el('span', 'cost', what + costLine(t)));
  }
  return meta;
}

function renderTurn(t: ChatTurn): HTMLElement {
  const article = el('article', `turn status-${t.status}`);
  article.dataset.turn = t.id;
  article.append(el('div', 'question', t.question), renderTools(t), renderAnswer(t), renderMeta(t));
  (article.firstElementChild as HTMLElement).hidden = !t.question;
  return article;
}

/** Updates only the parts that changed, so a streaming answer never re-creates the Cancel
 * button under the user's pointer. */
function updateTurn(node: HTMLElement, was: ChatTurn, t: ChatTurn) {
  const [question, tools, answer, meta] = Array.from(node.children) as HTMLElement[];
  node.className = `turn status-${t.status}`;
  if (was.question !== t.question) {
    question.textContent = t.question;
    question.hidden = !t.question;
  }
  if (JSON.stringify(was.tools) !== JSON.stringify(t.tools)) tools.replaceWith(renderTools(t));
  if (was.answer !== t.answer) answer.replaceWith(renderAnswer(t));
  if (was.status !== t.status || was.costUsd !== t.costUsd || was.error !== t.error || JSON.stringify(was.tokens) !== JSON.stringify(t.tokens)) {
    meta.replaceWith(renderMeta(t));
  }
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
    } else {
      const was = prevById.get(t.id);
      if (was && was !== t) updateTurn(old, was, t);
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
    case 'reset':
      rendered.forEach((n) => n.remove());
      rendered.clear();
      state = emptyState();
      set(receive(state, m));
      loadingOlder = false;
      log.scrollTop = log.scrollHeight;
      break;
    case 'older':
      set(receive(state, m));
      loadingOlder = false;
      break;
    case 'turn':
      errorBox.hidden = true;
      set(receive(state, m));
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
