// The extension against a mocked `vscode`: the manifest covers the server's contract, and
// activation, the memories view and the chat view do what the user asked.
import { test, beforeEach } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import * as vscodeTypes from 'vscode';
import { activate, deactivate } from '../src/extension';
import { MemoriesView } from '../src/memoriesView';
import { ChatView } from '../src/chatView';
import { COMPLETION_PROVIDERS } from '../src/settings';
import type * as Mock from './vscode-mock';

const vscode = vscodeTypes as unknown as typeof Mock;
const root = path.join(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

beforeEach(() => vscode.resetCalls());

/** The command names the server answers, read from its own source (src/lsp/ext.rs). */
function serverCommands(): string[] {
  const rs = fs.readFileSync(path.join(root, '..', '..', 'src', 'lsp', 'ext.rs'), 'utf8');
  const list = rs.match(/pub const COMMANDS: &\[&str\] = &\[([\s\S]*?)\];/);
  assert.ok(list, 'COMMANDS found in commands.rs');
  return [...list[1].matchAll(/"(mira\.[A-Za-z]+)"/g)].map((m) => m[1]);
}

test('the palette has an entry for every command the server answers', () => {
  const server = serverCommands();
  assert.ok(server.length >= 14, `server commands: ${server}`);
  const contributed = new Set(manifest.contributes.commands.map((c: any) => c.command));
  for (const c of server) assert.ok(contributed.has(c), `${c} is in the palette`);
});

test('settings cover provider, model, base URL, bash, edits.confirm, embedder, notifications; no key', () => {
  const props = Object.keys(manifest.contributes.configuration.properties);
  for (const k of ['mira.path', 'mira.provider', 'mira.model', 'mira.baseUrl', 'mira.bash', 'mira.edits.confirm', 'mira.embedder.provider', 'mira.notifications', 'mira.completion.provider', 'mira.completion.model', 'mira.completion.baseUrl']) {
    assert.ok(props.includes(k), k);
  }
  assert.ok(!props.some((k) => /key|token|secret/i.test(k)), `no secret in settings: ${props}`);
  const completionEnum = manifest.contributes.configuration.properties['mira.completion.provider'].enum;
  assert.deepEqual(completionEnum, ['', ...COMPLETION_PROVIDERS], 'the setting offers exactly the providers the extension sends');
});

test('activation without a binary says how to install it, and the UI is still there', async () => {
  vscode.settings.set('mira.path', '/nonexistent/mira');
  const subscriptions: { dispose(): void }[] = [];
  const context = {
    subscriptions,
    extensionUri: vscode.Uri.file(root),
    globalState: { get: () => undefined, update: async () => {} },
    secrets: { get: async () => undefined, store: async () => {}, delete: async () => {} },
  };
  const mira = await activate(context as any);
  const err = vscode.calls.showErrorMessage?.[0];
  assert.ok(err, 'an error message was shown');
  assert.match(err[0], /nonexistent\/mira.*cargo install/);
  assert.deepEqual(vscode.calls.registerWebviewViewProvider, [['mira.chat']]);
  assert.deepEqual(vscode.calls.createTreeView, [['mira.memories']]);
  assert.ok(vscode.calls['statusBar.show']);
  for (const c of ['mira.openChat', 'mira.restartServer', 'mira.showLog', 'mira.setApiKey', 'mira.memories.forget', 'mira.memories.restore', 'mira.memories.correct']) {
    assert.ok(vscode.commands.registered.has(c), c);
  }
  const contributed = manifest.contributes.commands.map((c: any) => c.command).filter((c: string) => !serverCommands().includes(c));
  for (const c of contributed) assert.ok(vscode.commands.registered.has(c), `${c} (contributed) is registered`);
  assert.equal(mira.running, false);
  subscriptions.forEach((s) => s.dispose());
  await deactivate();
});

/** A stand-in for MiraClient that records commands and serves `mira/memories` (active or one
 * status), `mira/goals` and `mira/tasks` (each "method not found" while unset). */
function fakeMira(memories: any[]) {
  const sent: [string, unknown[]][] = [];
  const events = new vscode.EventEmitter<any>();
  return {
    sent,
    events,
    running: true,
    lastEditor: undefined,
    userEditor: () => vscode.window.activeTextEditor,
    log: () => {},
    onEvent: events.event,
    onReady: new vscode.EventEmitter<boolean>().event,
    onTurnCommand: new vscode.EventEmitter<string>().event,
    memoriesChanged: new vscode.EventEmitter<void>(),
    goals: undefined as any[] | undefined,
    tasks: undefined as any[] | undefined,
    async request(method: string, params: any) {
      const missing = () => Object.assign(new Error(`Unhandled method ${method}`), { code: -32601 });
      if (method === 'mira/goals') {
        if (!this.goals) throw missing();
        return { goals: this.goals };
      }
      if (method === 'mira/tasks') {
        if (!this.tasks) throw missing();
        return { tasks: this.tasks };
      }
      assert.equal(method, 'mira/memories');
      return { memories: memories.filter((m) => m.status === (params?.status ?? 'active')) };
    },
    async command(c: string, args: unknown[]) {
      sent.push([c, args]);
      const a = args[0] as any;
      if (c === 'mira.forget') memories.find((m) => m.id === a.id)!.status = a.restore ? 'active' : 'retracted';
      return {};
    },
  };
}

test('memories view: forget, restore and correct from the context menu', async () => {
  const store = [
    { id: 1, kind: 'fact', body: 'The API uses tabs', scope: 'global', status: 'active' },
    { id: 2, kind: 'preference', body: 'Prefer iterators', scope: 'project:1', status: 'active' },
    { id: 3, kind: 'fact', body: 'Forgotten last week', scope: 'global', status: 'retracted' },
  ];
  const mira = fakeMira(store);
  const view = new MemoriesView(mira as any);
  await view.refresh();
  const top = () => view.getChildren().map((n: any) => n.group.id);
  const ids = (i: number) => view.getChildren(view.getChildren()[i]).map((n: any) => n.memory.id);
  // A memory forgotten before this window opened comes from the server, restorable.
  assert.deepEqual(top(), ['preference', 'fact', 'forgotten']);
  assert.deepEqual(ids(2), [3]);

  const fact = view.getChildren(view.getChildren()[1]);
  const item = view.getTreeItem(fact[0]);
  assert.equal(item.label, 'The API uses tabs');
  assert.equal(item.contextValue, 'memory');
  await view.forget(fact[0]);
  assert.deepEqual(mira.sent.at(-1), ['mira.forget', [{ id: 1 }]]);
  assert.deepEqual(top(), ['preference', 'forgotten']);
  assert.deepEqual(ids(1), [1, 3]);
  const forgotten = view.getChildren(view.getChildren()[1]);
  assert.equal(view.getTreeItem(forgotten[1]).contextValue, 'forgotten');

  await view.restore(forgotten[1]);
  assert.deepEqual(mira.sent.at(-1), ['mira.forget', [{ id: 3, restore: true }]]);
  assert.deepEqual(top(), ['preference', 'fact', 'forgotten']);
  assert.deepEqual(ids(1), [3]);
  assert.deepEqual(ids(2), [1]);

  vscode.inputAnswers.push('Prefer iterators over index loops');
  await view.correct(view.getChildren(view.getChildren()[0])[0]);
  assert.deepEqual(mira.sent.at(-1), ['mira.remember', [{ text: 'Prefer iterators over index loops', kind: 'correction', corrects: 2 }]]);
  view.dispose();
});

test('chat view: a question carries the editor as context; code blocks copy and insert', async () => {
  const mira = fakeMira([]);
  const edits: string[] = [];
  const editor = {
    document: { uri: vscode.Uri.file('/p/src/lib.rs') },
    selection: new vscode.Selection(new vscode.Position(2, 0), new vscode.Position(4, 1)),
    selections: [new vscode.Selection(new vscode.Position(2, 0), new vscode.Position(4, 1))],
    edit: async (f: (b: any) => void) => (f({ replace: (_s: unknown, t: string) => edits.push(t) }), true),
  };
  vscode.window.activeTextEditor = editor;
  const chat = new ChatView(vscode.Uri.file(root) as any, mira as any);
  const posted: any[] = [];
  let handler: (m: any) => Promise<void> = async () => {};
  const webview = {
    options: {},
    html: '',
    cspSource: 'vscode-resource:',
    asWebviewUri: (u: any) => u,
    postMessage: async (m: any) => posted.push(m),
    onDidReceiveMessage: (h: any) => (handler = h),
  };
  chat.resolveWebviewView({ webview, show() {}, onDidDispose() {} } as any);
  assert.match(webview.html, /Content-Security-Policy/);
  await handler({ type: 'ask', question: 'what does this do?', withContext: true });
  assert.deepEqual(mira.sent.at(-1), [
    'mira.ask',
    [{ question: 'what does this do?', uri: 'file:///p/src/lib.rs', position: { line: 2, character: 0 }, range: { start: { line: 2, character: 0 }, end: { line: 4, character: 1 } } }],
  ]);
  await handler({ type: 'ask', question: 'and in general?', withContext: false });
  assert.deepEqual(mira.sent.at(-1), ['mira.ask', [{ question: 'and in general?' }]]);
  await handler({ type: 'cancel', turn: 't9' });
  assert.deepEqual(mira.sent.at(-1), ['mira.cancel', [{ turn: 't9' }]]);
  await handler({ type: 'copy', text: 'let x = 1;' });
  assert.deepEqual(vscode.calls.clipboard, [['let x = 1;']]);
  await handler({ type: 'insert', text: 'let y = 2;' });
  assert.deepEqual(edits, ['let y = 2;']);
  vscode.window.activeTextEditor = undefined;
  chat.dispose();
});

test('with the refactor preview off, change annotations are not advertised (edits apply or become proposals)', async () => {
  const { PreviewSwitch } = await import('../src/client');
  const caps = () => ({ workspace: { workspaceEdit: { documentChanges: true, changeAnnotationSupport: { groupsOnLabel: true } } } });
  const on = caps();
  new PreviewSwitch(true).fillClientCapabilities(on);
  assert.ok(on.workspace.workspaceEdit.changeAnnotationSupport, 'preview on: advertised');
  const off = caps();
  new PreviewSwitch(false).fillClientCapabilities(off);
  assert.equal(off.workspace.workspaceEdit.changeAnnotationSupport, undefined);
  assert.equal(off.workspace.workspaceEdit.documentChanges, true, 'versioned edits stay');
});

test('inline completion goes through the language client when the server offers it', async () => {
  const { LanguageClient } = await import('vscode-languageclient/node');
  const client = new LanguageClient('mira', 'Mira', { command: '/nonexistent/mira', args: ['lsp'] }, {});
  const feature = client.getFeature('textDocument/inlineCompletion');
  assert.ok(feature, 'the client has the LSP 3.18 inline completion feature');
  const caps: any = {};
  feature.fillClientCapabilities(caps);
  assert.ok(caps.textDocument?.inlineCompletion, 'and advertises it to the server');
});

test('memories view: goals with milestones when the server has mira/goals; anchored memories open their symbol', async () => {
  const mira = fakeMira([
    { id: 7, kind: 'decision', body: 'add never panics', scope: 'project:1', status: 'active', anchors: [{ anchor: { path: 'src/lib.rs', symbol: 'calc::add' }, stale_since: 5, gone: false }] },
  ]);
  mira.goals = [{ id: 1, title: 'Ship 1.0', status: 'active', progress: 50, milestones: [{ id: 1, title: 'API frozen', done: true }, { id: 2, title: 'Docs', done: false }] }];
  const view = new MemoriesView(mira as any);
  await view.refresh();
  const [goals, decisions] = view.getChildren();
  assert.equal(view.getTreeItem(goals).label, 'Goals');
  const goal = view.getChildren(goals)[0];
  assert.equal(view.getTreeItem(goal).description, '#1 · 50%');
  assert.deepEqual(view.getChildren(goal).map((n) => [view.getTreeItem(n).label, (view.getTreeItem(n).iconPath as any).id]), [
    ['API frozen', 'pass-filled'],
    ['Docs', 'circle-large-outline'],
  ]);
  const memory = view.getTreeItem(view.getChildren(decisions)[0]);
  assert.equal(memory.description, '#7 · project · @src/lib.rs::calc::add (stale)');
  assert.equal(memory.command?.command, 'mira.memories.open');

  // Tasks: a goal's under the goal, after its milestones; the rest in their own group.
  mira.tasks = [
    { id: 4, goal_id: 1, title: 'Write the changelog', status: 'doing', priority: 'high' },
    { id: 5, goal_id: null, title: 'Rotate staging keys', status: 'todo', priority: 'normal' },
  ];
  await view.refresh();
  assert.deepEqual(view.getChildren().map((n) => view.getTreeItem(n).label), ['Goals', 'Tasks', 'Decisions']);
  const withTasks = view.getChildren(view.getChildren()[0])[0];
  assert.deepEqual(view.getChildren(withTasks).map((n) => [view.getTreeItem(n).label, view.getTreeItem(n).description ?? '']), [
    ['API frozen', ''],
    ['Docs', ''],
    ['Write the changelog', '#4 · doing · high'],
  ]);
  const loose = view.getChildren(view.getChildren()[1]).map((n) => view.getTreeItem(n));
  assert.deepEqual(loose.map((i) => [i.label, i.description, i.contextValue]), [['Rotate staging keys', '#5', 'task']]);

  // A server without mira/goals nor mira/tasks: neither group, no error.
  mira.goals = undefined;
  mira.tasks = undefined;
  await view.refresh();
  assert.deepEqual(view.getChildren().map((n) => view.getTreeItem(n).label), ['Decisions']);
  view.dispose();
});

test('a transcript the server streamed into is saved once its edits settle, other files never', async () => {
  const { TranscriptSaver } = await import('../src/transcript');
  const saved: string[] = [];
  const doc = (uri: string, dirty: boolean) => ({ uri: { toString: () => uri }, isDirty: dirty, save: async () => (saved.push(uri), true) });
  const t = 'file:///d/mira/conversation.md';
  (vscode.workspace as any).textDocuments = [doc(t, true), doc('file:///p/lib.rs', true), doc('file:///d/other/conversation.md', false)];
  const saver = new TranscriptSaver(20);
  saver.touched([t]);
  saver.touched([t, 'file:///d/other/conversation.md']);
  assert.deepEqual(saved, [], 'not while edits keep coming');
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(saved, [t], 'once, and only the dirty one');
  saver.dispose();
  (vscode.workspace as any).textDocuments = [];
});

test('a transcript whose dirty state arrives after the turn ends is still saved; a failed save is tried again', async () => {
  const { TranscriptSaver } = await import('../src/transcript');
  let listener: ((e: any) => void) | undefined;
  (vscode.workspace as any).onDidChangeTextDocument = (l: (e: any) => void) => ((listener = l), { dispose: () => (listener = undefined) });
  const t = 'file:///d/mira/conversation.md';
  let saves = 0;
  let refuse = 0;
  const doc = {
    uri: { toString: () => t },
    isDirty: false,
    save: async () => {
      saves++;
      if (refuse > 0) return (refuse--, false);
      doc.isDirty = false;
      return true;
    },
  };
  (vscode.workspace as any).textDocuments = [doc];
  const saver = new TranscriptSaver(20);
  saver.touched([t]);
  await saver.flush(); // mira/turnFinished, before the extension host knows the edit made it dirty
  assert.equal(saves, 0, 'a clean document is not saved');
  doc.isDirty = true;
  listener!({ document: doc, contentChanges: [] }); // the dirty state, late
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(saves, 1, 'saved once the document turned dirty');
  assert.equal(doc.isDirty, false);

  refuse = 1;
  doc.isDirty = true;
  saver.touched([t]);
  await new Promise((r) => setTimeout(r, 120));
  assert.equal(saves, 3, 'a refused save is tried again');
  assert.equal(doc.isDirty, false);

  const other = { uri: { toString: () => 'file:///p/lib.rs' }, isDirty: true, save: async () => assert.fail('a file the server never edited is saved') };
  listener!({ document: other, contentChanges: [] });
  await new Promise((r) => setTimeout(r, 60));
  saver.dispose();
  assert.equal(listener, undefined, 'the watch ends with the saver');
  delete (vscode.workspace as any).onDidChangeTextDocument;
  (vscode.workspace as any).textDocuments = [];
});

test("context comes from the user's code only: output channels, settings, webviews and diffs are skipped", async () => {
  const { MiraClient, editorSpot, isUserCode } = await import('../src/client');
  const ed = (uri: string) => ({
    document: { uri: vscode.Uri.parse(uri), isClosed: false },
    selection: new vscode.Selection(new vscode.Position(1, 0), new vscode.Position(1, 0)),
  });
  const file = ed('file:///p/src/lib.rs');
  for (const other of ['output:mira.mira.Mira', 'vscode-userdata:/User/settings.json', 'git:/p/src/lib.rs', 'vscode-bulkeditpreview-editor:/p/src/lib.rs', 'walkThroughSnippet:/x']) {
    assert.equal(isUserCode(ed(other) as any), false, other);
    assert.equal(editorSpot(ed(other) as any), undefined, `${other} is no context`);
  }
  assert.equal(isUserCode(ed('untitled:Untitled-1') as any), true);
  assert.equal(editorSpot(file as any)?.uri, 'file:///p/src/lib.rs');
  const context = { subscriptions: [] as any[], secrets: { get: async () => undefined } };
  const mira = new MiraClient(context as any, vscode.window.createOutputChannel('Mira') as any);
  mira.lastEditor = file as any;
  (vscode.window as any).activeTextEditor = ed('output:mira.mira.Mira');
  assert.equal(mira.userEditor(), file, 'the Mira output channel focused: the last file stays the context');
  (vscode.window as any).activeTextEditor = undefined; // a webview or the settings UI
  assert.equal(mira.userEditor(), file);
  (file.document as any).isClosed = true;
  assert.equal(mira.userEditor(), undefined, 'a closed file is no context');
  mira.dispose();
});

test('"Mira: Choose Model" lists the server\'s models, the one in use first and marked, and writes the pick to mira.model', async () => {
  const { chooseModel, modelItems } = await import('../src/models');
  const list = {
    model: 'qwen3:8b',
    baseUrl: 'http://127.0.0.1:11434/v1',
    available: true,
    window: 8192,
    windowDescribed: '8192 tokens (from the server\'s /api/show)',
    models: [
      { id: 'llama3.2:3b', window: 4096, inUse: false },
      { id: 'qwen3:8b', window: 8192, inUse: true },
      { id: 'smollm2', inUse: false },
    ],
  };
  assert.deepEqual(
    modelItems(list).map((i) => [i.label, i.description]),
    [
      ['qwen3:8b', '$(check) in use · 8192 tokens'],
      ['llama3.2:3b', '4096 tokens'],
      ['smollm2', undefined],
    ],
  );
  const asked: string[] = [];
  const mira = { command: async (c: string) => (asked.push(c), list as any) };
  vscode.quickPickAnswers.push((items) => items.find((i: any) => i.label === 'smollm2'));
  assert.equal(await chooseModel(mira), 'smollm2');
  assert.deepEqual(asked, ['mira.models']);
  assert.deepEqual(vscode.calls['configuration.update'], [['mira.model', 'smollm2', vscode.ConfigurationTarget.Global]]);
  assert.equal(vscode.settings.get('mira.model'), 'smollm2');

  // Dismissed: nothing written. The server down: its own message says so, no second toast.
  vscode.resetCalls();
  assert.equal(await chooseModel(mira), undefined);
  assert.equal(vscode.calls['configuration.update'], undefined);
  const down = { command: async () => Promise.reject(Object.assign(new Error('cannot list the models at http://127.0.0.1:9/v1'), { code: -32602 })) };
  assert.equal(await chooseModel(down), undefined);
  assert.equal(vscode.calls.showErrorMessage, undefined);
  const stopped = { command: async () => Promise.reject(new Error('Mira is not running: see the "Mira" output.')) };
  assert.equal(await chooseModel(stopped), undefined);
  assert.match(vscode.calls.showErrorMessage?.[0]?.[0], /not running/);
});
