// One turn, shown once: the chat view (the real ChatView, with a fake server and the page's
// own reducer) joins `mira/history` and live notifications by turn id over every interleaving
// of "the view opens", "the server takes its history snapshot" and "the history answer
// arrives" with a streaming turn; and the memories view ends on the newest state whatever
// order its answers come in.
import { test, beforeEach } from 'node:test';
import * as assert from 'node:assert/strict';
import * as path from 'path';
import * as fs from 'fs';
import * as vscodeTypes from 'vscode';
import { ChatView } from '../src/chatView';
import { MemoriesView } from '../src/memoriesView';
import { ChatState, emptyState, HistoryTurn, receive, ServerEvent, toolChipText } from '../src/webview/state';
import type * as Mock from './vscode-mock';

const vscode = vscodeTypes as unknown as typeof Mock;
const root = path.join(__dirname, '..', '..');
beforeEach(() => vscode.resetCalls());

const T = 'turn-7';
const Q = 'Ask Mira about `area`';
/** The live events of one turn: text, a tool call, more text, the end. */
const EVENTS: ServerEvent[] = [
  { method: 'mira/turnStarted', params: { turn: T, question: Q } },
  { method: 'mira/delta', params: { turn: T, text: 'Let me look.' } },
  { method: 'mira/toolCall', params: { turn: T, name: 'read_file', summary: 'read notes.txt' } },
  { method: 'mira/delta', params: { turn: T, text: 'The word is ' } },
  { method: 'mira/delta', params: { turn: T, text: 'PERIWINKLE.' } },
  { method: 'mira/turnFinished', params: { turn: T, status: 'completed', usage: { inputTokens: 220, cachedTokens: 0, outputTokens: 18 }, costUsd: 0.001 } },
];
const FINAL_ANSWER = 'Let me look.\n\nThe word is PERIWINKLE.';

const base = { startedAt: 1000, provider: 'openai-chat', model: 'gpt-4.1', error: null, cachedTokens: 0, costUsd: null };
const OLD: HistoryTurn = { ...base, turn: 'turn-6', status: 'completed', inputTokens: 1, outputTokens: 1, entries: [{ kind: 'user', text: 'earlier' }, { kind: 'assistant', text: 'before' }] };
const user = { kind: 'user' as const, text: Q };
const step1 = [{ kind: 'assistant' as const, text: 'Let me look.' }, { kind: 'tool_call' as const, text: '{"path": "notes.txt"}', tool: 'read_file' }];
const result = { kind: 'tool_result' as const, text: 'PERIWINKLE' };
const t = (status: HistoryTurn['status'], entries: HistoryTurn['entries']): HistoryTurn => ({ ...base, turn: T, startedAt: 2000, status, inputTokens: 220, outputTokens: 18, costUsd: 0.001, entries });
/** What the store holds at each point of the turn, and after how many of EVENTS each snapshot
 * can be taken (the server stores a step when its stream ends, and emits `mira/toolCall` after). */
const SNAPSHOTS: { name: string; turns: HistoryTurn[]; after: number[] }[] = [
  { name: 'before the turn', turns: [OLD], after: [0, 1] },
  { name: 'question stored', turns: [OLD, t('running', [user])], after: [0, 1, 2] },
  { name: 'first step stored', turns: [OLD, t('running', [user, ...step1])], after: [2, 3] },
  { name: 'tool result stored', turns: [OLD, t('running', [user, ...step1, result])], after: [3, 4, 5] },
  { name: 'turn stored as done', turns: [OLD, t('completed', [user, ...step1, result, { kind: 'assistant', text: 'The word is PERIWINKLE.' }])], after: [5, 6] },
];

function fakeServer() {
  const events = new vscode.EventEmitter<ServerEvent>();
  let snapshot: HistoryTurn[] = [];
  const pending: ((v: HistoryTurn[]) => void)[] = [];
  return {
    events,
    running: true,
    lastEditor: undefined,
    onEvent: events.event,
    onReady: new vscode.EventEmitter<boolean>().event,
    onTurnCommand: new vscode.EventEmitter<string>().event,
    userEditor: () => undefined,
    log: () => {},
    /** History requests wait until the test answers them; `auto` answers at once. */
    auto: false,
    set snapshot(s: HistoryTurn[]) {
      snapshot = s;
    },
    pending,
    async request(method: string) {
      assert.equal(method, 'mira/history');
      if (this.auto) return snapshot;
      return new Promise<HistoryTurn[]>((r) => pending.push(r));
    },
    async command() {
      return {};
    },
  };
}

/** Opens the view's page; its state follows every message the extension posts. */
function openPage(chat: ChatView) {
  const page = { state: emptyState() as ChatState, messages: 0 };
  let handler: (m: any) => Promise<void> = async () => {};
  const webview = {
    options: {},
    html: '',
    cspSource: 'vscode-resource:',
    asWebviewUri: (u: any) => u,
    postMessage: async (m: any) => {
      page.messages++;
      page.state = receive(page.state, m);
    },
    onDidReceiveMessage: (h: any) => (handler = h),
  };
  chat.resolveWebviewView({ webview, show() {}, onDidDispose() {} } as any);
  void handler({ type: 'ready' });
  return page;
}

const flush = () => new Promise((r) => setImmediate(r));

/** Nothing shown twice, nothing out of order, at any moment. */
function checkOnce(s: ChatState, where: string) {
  const ids = s.turns.map((x) => x.id);
  assert.equal(new Set(ids).size, ids.length, `${where}: a turn shown twice: ${ids}`);
  if (ids.includes('turn-6')) assert.equal(ids[0], 'turn-6', `${where}: order ${ids}`);
  const turn = s.turns.find((x) => x.id === T);
  if (!turn) return;
  assert.ok(turn.tools.length <= 1, `${where}: ${turn.tools.length} chips for one tool call`);
  for (const chip of turn.tools) assert.equal(chip.summary, 'read notes.txt', `${where}: chip`);
  assert.ok(FINAL_ANSWER.startsWith(turn.answer), `${where}: answer ${JSON.stringify(turn.answer)}`);
  assert.ok(turn.question === '' || turn.question === Q, `${where}: question ${JSON.stringify(turn.question)}`);
}

function checkFinal(s: ChatState, where: string) {
  assert.deepEqual(s.turns.map((x) => x.id), ['turn-6', T], where);
  const turn = s.turns[1];
  assert.deepEqual(
    { question: turn.question, answer: turn.answer, tools: turn.tools, status: turn.status },
    { question: Q, answer: FINAL_ANSWER, tools: [{ name: 'read_file', summary: 'read notes.txt' }], status: 'completed' },
    where,
  );
}

test('chat view: every interleaving of opening, the history snapshot and its answer with a streaming turn shows each entry once', async () => {
  let cases = 0;
  for (let open = 0; open <= EVENTS.length; open++) {
    for (const snap of SNAPSHOTS) {
      for (const taken of snap.after.filter((j) => j >= open)) {
        for (let answered = taken; answered <= EVENTS.length; answered++) {
          const where = `open after ${open} events, snapshot "${snap.name}" after ${taken}, answered after ${answered}`;
          const server = fakeServer();
          const chat = new ChatView(vscode.Uri.file(root) as any, server as any);
          let page: ReturnType<typeof openPage> | undefined;
          for (let e = 0; e <= EVENTS.length; e++) {
            if (e === open) {
              page = openPage(chat);
              await flush();
            }
            if (e === answered) {
              assert.equal(server.pending.length, 1, where);
              server.pending.shift()!(snap.turns);
              await flush();
            }
            if (page) checkOnce(page.state, `${where}, before event ${e}`);
            if (e < EVENTS.length) server.events.fire(EVENTS[e]);
          }
          checkFinal(page!.state, where);
          chat.dispose();
          cases++;
        }
      }
    }
  }
  assert.ok(cases > 80, `${cases} interleavings`);
});

test('chat view: a view opened twice, and a second history load racing the first, still shows one turn', async () => {
  const server = fakeServer();
  const chat = new ChatView(vscode.Uri.file(root) as any, server as any);
  server.events.fire(EVENTS[0]);
  server.events.fire(EVENTS[1]);
  const first = openPage(chat);
  await flush();
  server.events.fire(EVENTS[2]);
  const second = openPage(chat); // the view was moved or re-created: a new page, a new load
  await flush();
  server.events.fire(EVENTS[3]);
  // The second load answers first (the newest snapshot); the first, older one, answers last.
  server.pending[1](SNAPSHOTS[3].turns);
  await flush();
  server.pending[0](SNAPSHOTS[1].turns);
  await flush();
  for (const e of EVENTS.slice(4)) server.events.fire(e);
  checkFinal(second.state, 'the newest page');
  void first;
  chat.dispose();
});

test('chat view: a turn heard of mid-way never shows an entry twice, and ends as the store has it', async () => {
  // The server answers each history request with what the store holds after the events sent
  // so far: the earliest or the latest state consistent with them.
  for (const pick of ['earliest', 'latest'] as const) {
    for (let joinAt = 1; joinAt < EVENTS.length; joinAt++) {
      const where = `listening from event ${joinAt}, ${pick} snapshots`;
      const server = fakeServer();
      let sent = joinAt;
      const consistent = () => SNAPSHOTS.filter((x) => x.after.includes(sent));
      Object.defineProperty(server, 'request', {
        value: async () => (pick === 'earliest' ? consistent()[0] : consistent().at(-1)!).turns,
      });
      const chat = new ChatView(vscode.Uri.file(root) as any, server as any);
      const page = openPage(chat);
      await flush();
      for (let e = joinAt; e < EVENTS.length; e++) {
        sent = e + 1; // a request made on receiving event e sees the store as of then
        server.events.fire(EVENTS[e]);
        await flush();
        const turn = page.state.turns.find((x) => x.id === T);
        if (turn) {
          assert.ok(turn.tools.length <= 1, `${where}: two chips after event ${e}`);
          assert.ok((turn.answer.match(/PERIWINKLE/g) ?? []).length <= 1, `${where}: ${turn.answer}`);
          assert.ok((turn.answer.match(/Let me look/g) ?? []).length <= 1, `${where}: ${turn.answer}`);
        }
      }
      await flush();
      checkFinal(page.state, where);
      chat.dispose();
    }
  }
});

test('a tool chip reads the same live and from history, for every tool the server has', () => {
  // Live: the server's summary. History: the call's JSON arguments, described the same way.
  assert.equal(toolChipText('read_file', 'read notes.txt'), 'read notes.txt');
  assert.equal(toolChipText('read_file', undefined, '{"path": "notes.txt"}'), 'read notes.txt');
  assert.equal(toolChipText('read_file', '{"path": "notes.txt"}'), 'read notes.txt', 'JSON where a summary belongs is described');
  assert.equal(toolChipText('grep', undefined, '{"pattern": "fn \\"x\\""}'), 'grep "fn \\"x\\""');
  assert.equal(toolChipText('list_files', undefined, '{"path": "src", "glob": "**/*.rs"}'), 'list files in src matching **/*.rs');
  assert.equal(toolChipText('list_files', undefined, '{}'), 'list files');
  assert.equal(toolChipText('forget', undefined, '{"id": 12}'), 'forget #12');
  assert.equal(toolChipText('bash', undefined, '{"command": "cargo test"}'), '$ cargo test');
  assert.equal(toolChipText('mystery', undefined, '{"a": 1}'), 'mystery');
  assert.equal(toolChipText('read_file', undefined, 'not json'), 'read_file');
  // Every tool the server defines (src/agent/tools/*.rs) has its description here.
  const dir = path.join(root, '..', '..', 'src', 'agent', 'tools');
  const names = fs
    .readdirSync(dir)
    .flatMap((f) => [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/const NAME: &'static str = "([a-z_]+)"/g)].map((m) => m[1]));
  assert.ok(names.length >= 12, `tools: ${names}`);
  for (const name of names) assert.notEqual(toolChipText(name, undefined, '{}'), name, `${name} has a chip text`);
  // The same chip for the same call, whichever way the view learned of it.
  const live = new (require('../src/webview/state').Conversation)();
  for (const e of EVENTS) live.onEvent(e);
  const fromLive = live.turn(T).tools;
  const stored = new (require('../src/webview/state').Conversation)();
  stored.addHistory(SNAPSHOTS[4].turns, 20);
  assert.deepEqual(stored.turn(T).tools, fromLive);
  assert.equal(stored.turn(T).answer, live.turn(T).answer, 'the answer too, split by the tool call the same way');
});

test('memories view: answers that come back out of order, or overlap a forget, never show a memory twice or an old state', async () => {
  let generation = 0;
  const states = [
    { active: [{ id: 1, kind: 'fact', body: 'one', scope: 'global', status: 'active' }], forgotten: [] as any[] },
    { active: [] as any[], forgotten: [{ id: 1, kind: 'fact', body: 'one', scope: 'global', status: 'retracted' }] },
  ];
  const waiting: (() => void)[] = [];
  const mira = {
    onReady: new vscode.EventEmitter<boolean>().event,
    onEvent: new vscode.EventEmitter<any>().event,
    memoriesChanged: new vscode.EventEmitter<void>(),
    log: () => {},
    // Each request reads the state of the moment it is answered; the test answers them.
    async request(method: string, params: any) {
      if (method !== 'mira/memories') throw Object.assign(new Error('no'), { code: -32601 });
      await new Promise<void>((r) => waiting.push(r));
      const s = states[Math.min(generation, 1)];
      return { memories: params.status === 'retracted' ? s.forgotten : s.active };
    },
  };
  const view = new MemoriesView(mira as any);
  const labels = () => view.getChildren().flatMap((g: any) => view.getChildren(g).map((n: any) => `${g.group.id}:${n.memory.id}`));
  const a = view.refresh();
  const b = view.refresh(); // asked while the first runs: runs after it, once
  const c = view.refresh();
  assert.equal(waiting.length, 2, 'one refresh at a time');
  // The active list is answered before the forget, the forgotten one after it.
  waiting.shift()!();
  generation = 1;
  waiting.shift()!();
  await flush();
  assert.deepEqual(labels(), ['forgotten:1'], 'a memory is listed once');
  assert.equal(waiting.length, 2, 'the refresh asked for meanwhile runs');
  waiting.shift()!();
  waiting.shift()!();
  await Promise.all([a, b, c]);
  assert.deepEqual(labels(), ['forgotten:1']);
  assert.equal(waiting.length, 0, 'three asks, two refreshes');
  view.dispose();
});
