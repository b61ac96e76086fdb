// The extension's pure logic: settings, finding the binary, command arguments, the status bar.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as path from 'path';
import * as fs from 'fs';
import { editorConfig, RESTART_KEYS } from '../src/settings';
import { resolveServer, serverEnv, INSTALL_HINT } from '../src/server';
import { fillArguments, NeedsEditor, parseId } from '../src/commands';
import { addCost, costToday, statusText } from '../src/status';
import { groups, memoryDescription, memoryLabel, Memory, taskDescription, tasksOf } from '../src/memories';
import { transcriptTargets } from '../src/transcript';

test('settings become the editor layer of Mira config, only what is set, never a key', () => {
  const set: Record<string, unknown> = {
    provider: 'openai-chat',
    model: 'gpt-4.1',
    baseUrl: ' http://127.0.0.1:9/v1 ',
    bash: 'ask',
    effort: 'high',
    'edits.confirm': true,
    'embedder.provider': 'ollama',
    'embedder.model': 'nomic-embed-text',
    notifications: true,
    apiKey: 'sk-should-never-travel',
  };
  const cfg = editorConfig((k) => set[k]);
  assert.deepEqual(cfg, {
    notifications: true,
    provider: { name: 'openai-chat', model: 'gpt-4.1', base_url: 'http://127.0.0.1:9/v1' },
    agent: { bash: 'ask', effort: 'high' },
    edits: { confirm: true },
    memory: { embedder: { provider: 'ollama', model: 'nomic-embed-text' } },
  });
  assert.ok(!JSON.stringify(cfg).includes('sk-'), 'no secret in initializationOptions');

  const defaults = editorConfig(() => undefined);
  assert.deepEqual(defaults, { notifications: true, agent: { bash: 'off', effort: 'auto' }, edits: { confirm: false } });
  assert.equal(editorConfig((k) => (k === 'bash' ? 'always' : undefined)).agent.bash, 'off', 'unknown values fall back');
  assert.equal(editorConfig((k) => (k === 'notifications' ? false : undefined)).notifications, false);
  assert.deepEqual(editorConfig((k) => (k === 'embedder.provider' ? 'none' : undefined)).memory, { embedder: { provider: 'none' } }, 'none turns vectors off, so it is sent');
  assert.equal(editorConfig((k) => (k === 'embedder.provider' ? 'builtin' : undefined)).memory, undefined, "builtin is the server's default");
  assert.deepEqual(
    editorConfig((k) => ({ 'embedder.provider': 'builtin', 'embedder.model': 'static' } as Record<string, string>)[k]).memory,
    { embedder: { provider: 'builtin', model: 'static' } },
    'a built-in model other than the default is sent',
  );
});

test('completion settings become the [completion] section; unknown providers are not sent', () => {
  const set: Record<string, unknown> = { 'completion.provider': 'llama-cpp', 'completion.model': 'qwen', 'completion.baseUrl': ' http://127.0.0.1:8080 ' };
  assert.deepEqual(editorConfig((k) => set[k]).completion, { provider: 'llama-cpp', model: 'qwen', base_url: 'http://127.0.0.1:8080' });
  assert.deepEqual(editorConfig((k) => (k === 'completion.provider' ? 'chat' : undefined)).completion, { provider: 'chat' });
  assert.equal(editorConfig((k) => (k === 'completion.provider' ? 'copilot' : undefined)).completion, undefined);
  assert.equal(editorConfig(() => undefined).completion, undefined, 'unset: the config file decides');
  assert.ok(RESTART_KEYS.includes('mira.completion'), 'a completion change restarts the server (it reads [completion] at startup)');
});

test('the binary comes from mira.path, else PATH, else a message with the install command', () => {
  const exists = new Set(['/opt/mira/bin/mira', '/usr/local/bin/mira']);
  const probe = (f: string) => exists.has(f);
  assert.deepEqual(resolveServer('/opt/mira/bin/mira', '/usr/local/bin', probe, 'linux'), { ok: true, command: '/opt/mira/bin/mira' });
  const bad = resolveServer('/nope/mira', '/usr/local/bin', probe, 'linux');
  assert.equal(bad.ok, false);
  assert.match((bad as any).message, /\/nope\/mira.*not an executable/);
  assert.deepEqual(resolveServer('', ['/bin', '/usr/local/bin'].join(path.delimiter), probe, 'linux'), { ok: true, command: '/usr/local/bin/mira' });
  const missing = resolveServer(undefined, '/bin', probe, 'linux');
  assert.equal(missing.ok, false);
  assert.ok((missing as any).message.includes(INSTALL_HINT) && INSTALL_HINT.includes('cargo install'));
});

test('API keys from SecretStorage reach the server environment, the real environment wins', () => {
  const env = serverEnv({ PATH: '/bin', ANTHROPIC_API_KEY: 'from-env' }, { OPENAI_API_KEY: 'stored-openai', ANTHROPIC_API_KEY: 'stored-anthropic' });
  assert.equal(env.OPENAI_API_KEY, 'stored-openai');
  assert.equal(env.ANTHROPIC_API_KEY, 'from-env');
  assert.equal(env.PATH, '/bin');
});

const spot = {
  uri: 'file:///p/src/lib.rs',
  selection: { start: { line: 3, character: 4 }, end: { line: 5, character: 0 } },
  diagnostics: [{ message: 'unused variable' }],
};
const prompts = (answers: (string | undefined)[]) => ({
  input: async () => answers.shift(),
  number: async () => parseId(answers.shift()),
});

test('palette commands get their arguments from the editor and from prompts', async () => {
  assert.deepEqual(await fillArguments('mira.ask', [], spot, prompts(['why?'])), [
    { question: 'why?', uri: spot.uri, range: spot.selection, position: spot.selection.start },
  ]);
  assert.deepEqual(await fillArguments('mira.ask', [], undefined, prompts(['why?'])), [{ question: 'why?' }]);
  assert.equal(await fillArguments('mira.ask', [], spot, prompts([undefined])), undefined, 'dismissed prompt sends nothing');
  assert.deepEqual(await fillArguments('mira.askSymbol', [], spot, prompts([])), [{ uri: spot.uri, position: spot.selection.start }]);
  assert.deepEqual(await fillArguments('mira.explain', [], spot, prompts([])), [{ uri: spot.uri, range: spot.selection }]);
  assert.deepEqual(await fillArguments('mira.fix', [], spot, prompts([])), [{ uri: spot.uri, range: spot.selection, diagnostics: spot.diagnostics }]);
  await assert.rejects(fillArguments('mira.explain', [], undefined, prompts([])), NeedsEditor);
  // The server's "Mira: edit selection…" action leaves the instruction to the client.
  assert.deepEqual(await fillArguments('mira.edit', [{ uri: 'file:///a', range: spot.selection }], spot, prompts(['use iterators'])), [
    { uri: 'file:///a', range: spot.selection, instruction: 'use iterators' },
  ]);
  assert.deepEqual(await fillArguments('mira.remember', [], spot, prompts(['tabs in Go'])), [{ uri: spot.uri, range: spot.selection, text: 'tabs in Go' }]);
  assert.deepEqual(await fillArguments('mira.forget', [], spot, prompts(['#12'])), [{ id: 12 }]);
  assert.deepEqual(await fillArguments('mira.applyProposal', [], spot, prompts(['3'])), [{ proposal: 3 }]);
  assert.equal(await fillArguments('mira.rejectProposal', [], spot, prompts(['three'])), undefined);
  const given = [{ uri: 'file:///b', position: { line: 1, character: 1 } }];
  assert.equal(await fillArguments('mira.askSymbol', given, undefined, prompts([])), given, 'code-action arguments pass through');
  assert.deepEqual(await fillArguments('mira.status', [], undefined, prompts([])), []);
});

test('the status bar says idle, answering, stopped, and what today cost', async () => {
  const mem = new Map<string, unknown>();
  const store = { get: (k: string) => mem.get(k), update: async (k: string, v: unknown) => void mem.set(k, v) };
  const day1 = new Date('2026-11-22T10:00:00Z');
  await addCost(store, 0.004, day1);
  await addCost(store, 0.02, day1);
  assert.ok(Math.abs(costToday(store, day1) - 0.024) < 1e-9);
  assert.equal(costToday(store, new Date('2026-11-23T00:00:01Z')), 0, 'a new day starts at zero');
  assert.equal(statusText('ready', 0, 0).text, '$(comment-discussion) Mira');
  assert.equal(statusText('ready', 0, 0.024).text, '$(comment-discussion) Mira $0.02');
  assert.equal(statusText('ready', 0, 0.0042).text, '$(comment-discussion) Mira $0.0042');
  assert.match(statusText('ready', 1, 0.5).text, /answering…/);
  assert.match(statusText('stopped', 0, 0).tooltip, /not running/);
});

test('memories are grouped by kind, forgotten ones kept apart for restore', () => {
  const m = (id: number, kind: Memory['kind'], extra: Partial<Memory> = {}): Memory => ({ id, kind, body: `memory ${id}`, scope: 'global', status: 'active', ...extra });
  const g = groups([m(1, 'fact'), m(2, 'preference'), m(3, 'fact', { scope: 'project:1', stale: true }), m(4, 'correction', { supersedes: 1 })], [m(9, 'fact', { status: 'retracted' })]);
  assert.deepEqual(g.map((x) => [x.id, x.items.map((i) => i.id)]), [
    ['correction', [4]],
    ['preference', [2]],
    ['fact', [1, 3]],
    ['forgotten', [9]],
  ]);
  assert.equal(memoryDescription(m(3, 'fact', { scope: 'project:1', stale: true })), '#3 · project · stale');
  assert.equal(memoryDescription(m(4, 'correction', { supersedes: 1 })), '#4 · global · corrects #1');
  assert.equal(memoryLabel({ ...m(5, 'fact'), body: 'a\n  b ' + 'x'.repeat(100) }).length, 80);
});

test('the transcript files a server edit touches, from documentChanges or changes', () => {
  const t = 'file:///home/u/.local/share/mira/conversation.md';
  assert.deepEqual(
    transcriptTargets({
      documentChanges: [
        { textDocument: { uri: t }, edits: [] } as never,
        { textDocument: { uri: 'file:///p/src/lib.rs' }, edits: [] } as never,
        { kind: 'create', uri: 'file:///p/new.rs' } as never,
        { textDocument: { uri: t }, edits: [] } as never,
      ],
    }),
    [t],
  );
  assert.deepEqual(transcriptTargets({ changes: { [t]: [], 'file:///p/notes.md': [] } }), [t]);
  assert.deepEqual(transcriptTargets({ changes: { 'file:///p/my-conversation.md.bak': [] } }), []);
  assert.deepEqual(transcriptTargets({}), []);
});

test('tasks: a goal keeps its own, the rest (no goal, or a goal not listed) are loose', () => {
  const goals = [{ id: 1, title: 'g', status: 'active', progress: 0, milestones: [] }];
  const tasks = [
    { id: 1, goal_id: 1, title: 'a', status: 'todo', priority: 'normal' },
    { id: 2, goal_id: null, title: 'b', status: 'doing', priority: 'urgent' },
    { id: 3, goal_id: 9, title: 'c', status: 'todo', priority: 'low' },
  ] as const;
  assert.deepEqual(tasksOf([...tasks], goals, 1).map((t) => t.id), [1]);
  assert.deepEqual(tasksOf([...tasks], goals, undefined).map((t) => t.id), [2, 3]);
  assert.equal(taskDescription(tasks[1]), '#2 · doing · urgent');
  assert.equal(taskDescription(tasks[0]), '#1');
});

test('the server log: found where the server writes it, followed line by line into the channel', async () => {
  const { logDir, storeHome, logFileName, LogTail } = await import('../src/serverLog');
  const { parseServerLine } = await import('../src/client');
  const none = () => undefined;
  assert.equal(logDir({ MIRA_HOME: '/m', HOME: '/h' }, none), '/m/logs');
  assert.equal(logDir({ HOME: '/h' }, none), '/h/.local/share/mira/logs');
  assert.equal(logDir({ HOME: '/h', XDG_DATA_HOME: '/d' }, none), '/d/mira/logs');
  const files: Record<string, string> = { '/h/.config/mira/config.toml': '[provider]\nname = "openai"\n[store]\nhome = "/srv/mira"\n' };
  assert.equal(logDir({ HOME: '/h' }, (p) => files[p]), '/srv/mira/logs', 'the user config file sets [store] home');
  assert.equal(logDir({ HOME: '/h', MIRA_HOME: '/m' }, (p) => files[p]), '/m/logs', 'MIRA_HOME wins, as in the server');
  assert.equal(storeHome("store.home = '/lit'\n"), '/lit');
  assert.equal(storeHome('[other]\nhome = "/no"\n'), undefined);
  assert.equal(logFileName(new Date('2026-11-25T23:59:59Z')), 'mira.log.2026-11-25');

  assert.deepEqual(parseServerLine('2026-11-25T19:11:49.229209Z  INFO mira::cli: language server stopped clean=true'), {
    level: 'info',
    text: '[server 2026-11-25T19:11:49.229209Z] mira::cli: language server stopped clean=true',
  });
  assert.equal(parseServerLine('2026-11-25T19:11:49Z  WARN mira: slow')?.level, 'warn');
  assert.deepEqual(parseServerLine('  continued'), { level: 'info', text: '  continued' });
  assert.equal(parseServerLine(''), undefined);

  const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'mira-log-'));
  let now = new Date('2026-11-25T10:00:00Z');
  const lines: string[] = [];
  const tail = new LogTail(dir, (l) => lines.push(l), 10_000, () => now);
  tail.poll();
  assert.deepEqual(lines, [], 'no file yet');
  fs.writeFileSync(path.join(dir, 'mira.log.2026-11-25'), 'one\ntw');
  tail.poll();
  assert.deepEqual(lines, ['one'], "today's lines, whole lines only");
  fs.appendFileSync(path.join(dir, 'mira.log.2026-11-25'), 'o\nthree ✓\n');
  tail.poll();
  assert.deepEqual(lines, ['one', 'two', 'three ✓']);
  now = new Date('2026-11-26T00:00:01Z');
  fs.writeFileSync(path.join(dir, 'mira.log.2026-11-26'), 'next day\n');
  tail.poll();
  assert.deepEqual(lines, ['one', 'two', 'three ✓', 'next day'], 'follows the new day');
  tail.dispose();
  fs.rmSync(dir, { recursive: true });
});

test('only the chat-view answer toast is dropped; failures and other messages still show', async () => {
  const { shownInChat } = await import('../src/client');
  const answered = { type: 3 as const, message: 'Mira answered (220 tokens in, 18 out) — see conversation.md' };
  assert.equal(shownInChat(answered, true), true);
  assert.equal(shownInChat({ type: 3 as const, message: 'Mira answered (220 tokens in, 18 out, $0.0010) — see conversation.md' }, true), true);
  assert.equal(shownInChat(answered, false), false, 'without the chat view (notifications off) it shows');
  assert.equal(shownInChat({ type: 2 as const, message: 'Mira: turn failed: the openai stream broke' }, true), false);
  assert.equal(shownInChat({ type: 3 as const, message: 'Mira: index ready' }, true), false);
});
