// Mira for VS Code: wires the language client, the chat view, the memories view, the status
// bar and the extension's own commands. Mira's `mira.*` commands are registered by the
// language client from the server's executeCommandProvider; their palette entries come from
// package.json and their missing arguments from commands.ts.
import * as vscode from 'vscode';
import { MiraClient } from './client';
import { ChatView } from './chatView';
import { MemoriesView } from './memoriesView';
import { KEY_VARIABLES } from './server';
import { RESTART_KEYS } from './settings';
import { addCost, costToday, ServerPhase, statusText } from './status';
import { LogTail, logDir } from './serverLog';
import { chooseModel } from './models';

/** What deactivate stops, in order: the server (shutdown, exit), then the log and channel. */
let running: { mira: MiraClient; tail?: LogTail; output: vscode.LogOutputChannel } | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<MiraClient> {
  // One channel: the language client's own lines and the server's log file (each line at its
  // level). It is disposed by deactivate after the server stopped, never while the client
  // still writes to it (VS Code disposes subscriptions as soon as deactivate is called).
  const output = vscode.window.createOutputChannel('Mira', { log: true });
  const mira = new MiraClient(context, output);
  const dir = logDir(process.env);
  const tail = dir ? new LogTail(dir, (line) => mira.serverLine(line)) : undefined;
  running = { mira, tail, output };
  const chat = new ChatView(context.extensionUri, mira);
  const memories = new MemoriesView(mira);
  context.subscriptions.push(
    chat,
    memories,
    vscode.window.registerWebviewViewProvider(ChatView.id, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.window.createTreeView(MemoriesView.id, { treeDataProvider: memories, showCollapseAll: true }),
  );

  // Status bar: idle / answering… / cost today; opens the chat.
  const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  item.name = 'Mira';
  item.command = 'mira.openChat';
  let phase: ServerPhase = 'starting';
  const answering = new Set<string>();
  const show = () => Object.assign(item, statusText(phase, answering.size, costToday(context.globalState)));
  show();
  item.show();
  context.subscriptions.push(
    item,
    mira.onReady((up) => {
      // The server's commands exist only while it runs (the language client registers them).
      vscode.commands.executeCommand('setContext', 'mira.serverRunning', up).then(undefined, () => {});
      phase = up ? 'ready' : 'stopped';
      if (!up) answering.clear();
      show();
    }),
    mira.onEvent(async (e) => {
      if (e.method === 'mira/turnStarted') answering.add(e.params.turn);
      if (e.method === 'mira/turnFinished') {
        answering.delete(e.params.turn);
        if (e.params.costUsd) await addCost(context.globalState, e.params.costUsd);
      }
      show();
    }),
  );

  context.subscriptions.push(
    vscode.commands.registerCommand('mira.openChat', () => chat.reveal()),
    vscode.commands.registerCommand('mira.restartServer', () => mira.restart()),
    vscode.commands.registerCommand('mira.showLog', () => {
      tail?.poll();
      output.show(true);
    }),
    vscode.commands.registerCommand('mira.setApiKey', () => setApiKey(context, mira)),
    vscode.commands.registerCommand('mira.chooseModel', () => chooseModel(mira)),
    vscode.commands.registerCommand('mira.memories.refresh', () => memories.refresh()),
    vscode.commands.registerCommand('mira.memories.forget', (n) => memories.forget(n)),
    vscode.commands.registerCommand('mira.memories.restore', (n) => memories.restore(n)),
    vscode.commands.registerCommand('mira.memories.correct', (n) => memories.correct(n)),
    vscode.commands.registerCommand('mira.memories.open', (m) => memories.open(m)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('mira')) return;
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) void mira.restart();
      else mira.sendSettings();
    }),
  );

  tail?.start();
  await mira.start();
  return mira;
}

/** Reload, disable, uninstall, window close: the server gets shutdown and exit (VS Code waits
 * for this promise), and only then do the log tail and the output channel go. */
export async function deactivate(): Promise<void> {
  const r = running;
  running = undefined;
  if (!r) return;
  r.mira.disposing();
  try {
    await r.mira.stop();
  } finally {
    r.tail?.dispose();
    r.mira.dispose();
    r.output.dispose();
  }
}

/** Keys live in VS Code's SecretStorage and reach the server as environment variables. */
async function setApiKey(context: vscode.ExtensionContext, mira: MiraClient) {
  const name = await vscode.window.showQuickPick([...KEY_VARIABLES], { title: 'Which key?' });
  if (!name) return;
  const value = await vscode.window.showInputBox({
    prompt: `${name} (stored in VS Code's secret storage, never in settings.json; empty removes it)`,
    password: true,
    ignoreFocusOut: true,
  });
  if (value === undefined) return;
  if (value.trim()) await context.secrets.store(name, value.trim());
  else await context.secrets.delete(name);
  if (process.env[name]) {
    void vscode.window.showInformationMessage(`Mira: ${name} is also set in the environment, which takes precedence.`);
  }
  await mira.restart();
}
