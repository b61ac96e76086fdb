// The language client: starts `mira lsp`, restarts it when it crashes (saying so), fills in
// command arguments from the editor, and hands Mira's notifications to whoever listens.
import * as vscode from 'vscode';
import {
  CancellationToken,
  ShowMessageNotification,
  ShowMessageParams,
  MessageType,
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
} from 'vscode-languageclient/node';
import { fillArguments, parseId, STARTS_TURN } from './commands';
import { resolveServer, serverEnv, KEY_VARIABLES, KeyVariable } from './server';
import { editorConfig } from './settings';
import { TranscriptSaver, transcriptTargets } from './transcript';
import type { ServerEvent } from './webview/state';

const NOTIFICATIONS = ['mira/turnStarted', 'mira/delta', 'mira/toolCall', 'mira/turnFinished'] as const;
/** Crashes tolerated within RESTART_WINDOW_MS before Mira gives up and says so. */
const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60_000;
/** How long the first start waits for `mira.path` when it is not there yet: settings can reach
 * the extension host after activation (user settings of a remote window, profiles, sync). */
const SETTINGS_GRACE_MS = 4_000;

/**
 * Whether a `window/showMessage` only says what the chat view already shows: the server's
 * "Mira answered (… tokens in, … out) — see conversation.md" after a completed turn (sent for
 * clients without a chat, like Helix). Failures and every other message still show.
 */
export function shownInChat(m: ShowMessageParams, chatOn: boolean): boolean {
  return chatOn && m.type === MessageType.Info && /^Mira answered \(.*\) — see conversation\.md$/.test(m.message);
}

export function miraSettings() {
  const c = vscode.workspace.getConfiguration('mira');
  return editorConfig((k) => c.get(k));
}

/** The documents that are the user's code: files and unsaved new files. Output channels,
 * settings, webviews, diff and preview documents, the git and search views are not. */
export const USER_SCHEMES = new Set(['file', 'untitled']);

/** Whether the active tab is a diff (its editors show files, but it is no place to ask from). */
function activeTabIsDiff(): boolean {
  const input = (vscode.window as any).tabGroups?.activeTabGroup?.activeTab?.input;
  const Diff = (vscode as any).TabInputTextDiff;
  return !!input && !!Diff && input instanceof Diff;
}

/** Whether an editor shows the user's code (so it may be Mira's context). */
export function isUserCode(editor: vscode.TextEditor | undefined, active = false): editor is vscode.TextEditor {
  if (!editor || !USER_SCHEMES.has(editor.document.uri.scheme) || (editor.document as any).isClosed) return false;
  return !(active && activeTabIsDiff());
}

/** The active editor's spot in LSP terms, with diagnostics overlapping the selection; only
 * for the user's code (anything else is no context). */
export function editorSpot(editor: vscode.TextEditor | undefined) {
  if (!isUserCode(editor)) return undefined;
  const sel = editor.selection;
  const diagnostics = vscode.languages
    .getDiagnostics(editor.document.uri)
    .filter((d) => d.range.intersection(sel) !== undefined)
    .map((d) => ({
      range: lspRange(d.range),
      message: d.message,
      severity: d.severity + 1,
      source: d.source,
      code: typeof d.code === 'object' ? d.code.value : d.code,
    }));
  return { uri: editor.document.uri.toString(), selection: lspRange(sel), diagnostics };
}

function lspRange(r: vscode.Range) {
  return {
    start: { line: r.start.line, character: r.start.character },
    end: { line: r.end.line, character: r.end.character },
  };
}

/** Removes change-annotation support when the user turned the refactor preview off, so the
 * server applies model edits directly or keeps them as proposals (`mira.edits.confirm`). */
export class PreviewSwitch implements StaticFeature {
  constructor(private readonly preview: boolean) {}
  fillClientCapabilities(caps: any): void {
    if (!this.preview && caps.workspace?.workspaceEdit) delete caps.workspace.workspaceEdit.changeAnnotationSupport;
  }
  initialize(): void {}
  getState() {
    return { kind: 'static' as const };
  }
  clear(): void {}
}

type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** `2026-11-25T19:05:00.120456Z  INFO mira::lsp: message` (tracing's format) → level and text
 * (`[server 2026-11-25T19:05:00.120456Z] mira::lsp: message`); other lines (a multi-line
 * message's continuation) at info, as they are. */
export function parseServerLine(line: string): { level: LogLevel; text: string } | undefined {
  if (!line.trim()) return undefined;
  const m = /^(\d{4}-\d\d-\d\dT\S+)\s+(TRACE|DEBUG|INFO|WARN|ERROR)\s+(.*)$/.exec(line);
  if (!m) return { level: 'info', text: line };
  const level = m[2] === 'WARN' ? 'warn' : (m[2].toLowerCase() as LogLevel);
  return { level, text: `[server ${m[1]}] ${m[3]}` };
}

export class MiraClient implements vscode.Disposable {
  client: LanguageClient | undefined;
  private readonly events = new vscode.EventEmitter<ServerEvent>();
  readonly onEvent = this.events.event;
  private readonly ready = new vscode.EventEmitter<boolean>();
  /** Fires true when the server is running, false when it stopped. */
  readonly onReady = this.ready.event;
  private readonly turns = new vscode.EventEmitter<string>();
  /** A command started a turn (its id); the chat view reveals itself. */
  readonly onTurnCommand = this.turns.event;
  private crashes: number[] = [];
  private readonly transcripts = new TranscriptSaver();
  /** The last editor of the user's code that had focus: the context while the chat, the
   * output panel, a settings editor or a diff has it. */
  lastEditor: vscode.TextEditor | undefined = isUserCode(vscode.window.activeTextEditor, true) ? vscode.window.activeTextEditor : undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
  ) {
    context.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (isUserCode(e, true)) this.lastEditor = e;
      }),
    );
  }

  /** Where the user is in their code: the active editor when it shows their code, else the
   * last one that did (never an output channel, settings, a webview or a diff). */
  userEditor(): vscode.TextEditor | undefined {
    const active = vscode.window.activeTextEditor;
    if (isUserCode(active, true)) return active;
    return isUserCode(this.lastEditor) ? this.lastEditor : undefined;
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  private disposed = false;
  private started = false;
  private stopping: Promise<void> | undefined;

  /** A line in the Mira output channel (nothing once the channel is gone). */
  log(line: string, level: LogLevel = 'info'): void {
    if (!this.disposed) this.output[level](line);
  }

  /** A line of the server's log file, at its own level, with its own time. */
  serverLine(line: string): void {
    const l = parseServerLine(line);
    if (l) this.log(l.text, l.level);
  }

  /** Finds the binary; the first time, gives settings that are still arriving a moment. */
  private async findServer() {
    const read = () => resolveServer(vscode.workspace.getConfiguration('mira').get<string>('path'), process.env.PATH);
    let found = read();
    if (this.started) return found;
    this.started = true;
    const end = Date.now() + SETTINGS_GRACE_MS;
    while (!found.ok && !this.disposed && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      found = read();
    }
    return found;
  }

  async start(): Promise<void> {
    if (this.stopping) await this.stopping;
    const found = await this.findServer();
    if (this.disposed) return;
    const cfg = vscode.workspace.getConfiguration('mira');
    if (!found.ok) {
      this.log(found.message);
      this.ready.fire(false);
      const pick = await vscode.window.showErrorMessage(found.message, 'Open Settings');
      if (pick) void vscode.commands.executeCommand('workbench.action.openSettings', 'mira.path');
      return;
    }
    const stored: Partial<Record<KeyVariable, string>> = {};
    for (const name of KEY_VARIABLES) {
      const v = await this.context.secrets.get(name);
      if (v) stored[name] = v;
    }
    const serverOptions: ServerOptions = {
      command: found.command,
      args: ['lsp'],
      options: { env: serverEnv(process.env, stored) },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
      initializationOptions: { mira: miraSettings() },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onClosed(),
      },
      middleware: {
        // Requests VS Code makes while the client stops (a reload, a restart) get no answer
        // instead of failing ("Client is not running", "Starting server failed").
        provideCodeActions: (d, r, c, t, next) => this.whileRunning(() => next(d, r, c, t)),
        resolveCodeAction: (item, t, next) => this.whileRunning(() => next(item, t), item),
        provideHover: (d, p, t, next) => this.whileRunning(() => next(d, p, t)),
        provideDefinition: (d, p, t, next) => this.whileRunning(() => next(d, p, t)),
        provideDocumentSymbols: (d, t, next) => this.whileRunning(() => next(d, t)),
        provideWorkspaceSymbols: (q, t, next) => this.whileRunning(() => next(q, t)),
        provideInlineCompletionItems: (d, p, c, t, next) => this.whileRunning(() => next(d, p, c, t)),
        executeCommand: (command, args, next) => this.execute(command, args, next),
        workspace: {
          handleApplyEdit: async (params, next) => {
            const result = await next(params, CancellationToken.None);
            if ((result as { applied?: boolean } | undefined)?.applied) this.transcripts.touched(transcriptTargets(params.edit));
            return result;
          },
        },
        window: {
          showDocument: async (params, token, next) => {
            // The chat view shows turns; the markdown transcript opens only when asked for.
            // Declined, not faked: told it was not shown, the server writes the file instead of
            // streaming edits into a copy no tab shows (which VS Code would keep unsaved).
            const transcript = params.uri.endsWith('/conversation.md');
            const wanted = vscode.workspace.getConfiguration('mira').get<boolean>('chat.openTranscript');
            if (transcript && !params.external && !wanted && !this.openingTranscript) return { success: false };
            return next(params, token);
          },
        },
      },
    };
    const client = new LanguageClient('mira', 'Mira', serverOptions, clientOptions);
    client.registerFeature(new PreviewSwitch(cfg.get<boolean>('edits.preview') !== false));
    for (const method of NOTIFICATIONS) {
      client.onNotification(method, (params: any) => {
        // The transcript's last edit of a turn is applied before the turn's end is announced:
        // save it now rather than later (a reload in between would restore it dirty).
        if (method === 'mira/turnFinished') void this.transcripts.flush().catch(() => {});
        this.events.fire({ method, params } as ServerEvent);
      });
    }
    // The language client's own showMessage handler, less the toast that points to
    // conversation.md for an answer the chat view already shows (replaces the default one).
    client.onNotification(ShowMessageNotification.type, (m) => {
      if (shownInChat(m, miraSettings().notifications)) return this.log(`[showMessage] ${m.message}`);
      const show =
        m.type === MessageType.Error ? vscode.window.showErrorMessage : m.type === MessageType.Warning ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
      void show(m.message);
    });
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.ready.fire(true);
    });
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      if (this.disposed || this.client !== client) return;
      this.log(`Mira: the server did not start: ${e}`);
      this.ready.fire(false);
      void vscode.window.showErrorMessage(`Mira: the server did not start (${e}). See the "Mira" output.`);
    }
  }

  private openingTranscript = false;

  /** Runs a request of VS Code's unless the client is stopping; one caught by a stop answers
   * `fallback` (nothing) rather than an error. */
  private async whileRunning<T, F = undefined>(request: () => vscode.ProviderResult<T>, fallback?: F): Promise<T | F | undefined> {
    const client = this.client;
    const stopped = () => this.disposed || !!this.stopping || this.client !== client || client?.state !== State.Running;
    if (stopped()) return fallback;
    try {
      return (await request()) ?? undefined;
    } catch (e) {
      if (stopped()) return fallback;
      throw e;
    }
  }

  private onClosed() {
    if (this.disposed || this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < RESTART_WINDOW_MS), now];
    this.ready.fire(false);
    if (this.crashes.length > MAX_RESTARTS) {
      return {
        action: CloseAction.DoNotRestart,
        message: `Mira's server stopped ${this.crashes.length} times in 3 minutes and was not restarted. See the "Mira" output, then run "Mira: Restart the language server".`,
      };
    }
    void vscode.window.showWarningMessage("Mira's server stopped unexpectedly; restarting it.");
    return { action: CloseAction.Restart, handled: true };
  }

  async restart(): Promise<void> {
    await this.stop();
    this.crashes = [];
    await this.start();
  }

  /** Stops the server cleanly (shutdown, then exit); one stop at a time, awaited by all. */
  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    const c = this.client;
    this.client = undefined;
    if (!c) return Promise.resolve();
    // While the extension host shuts down, nothing else may run (setContext would be cancelled).
    if (!this.disposed) this.ready.fire(false);
    this.stopping = (async () => {
      try {
        // A client still starting is stopped once it runs (stopping it before throws).
        if (c.state === State.Starting) await c.start().catch(() => {});
        if (c.state === State.Running) await c.stop(3000);
      } catch (e) {
        this.log(`Mira: stopping the server: ${e}`);
      } finally {
        // A transcript the server just streamed into is saved now, not left dirty (a reload
        // would restore it as a dirty tab).
        await this.transcripts.flush().catch(() => {});
        this.stopping = undefined;
      }
    })();
    return this.stopping;
  }

  /** Sends settings as `workspace/didChangeConfiguration {settings: {mira: …}}`. */
  sendSettings(): void {
    if (!this.running) return;
    void this.client!.sendNotification(DidChangeConfigurationNotification.type, { settings: { mira: miraSettings() } });
  }

  /** Runs a Mira command on the server directly (no prompts). */
  async command<T = any>(command: string, args: unknown[] = []): Promise<T> {
    if (!this.client || !this.running) throw new Error('Mira is not running: see the "Mira" output.');
    return this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args as any[] });
  }

  async request<T = any>(method: string, params: unknown): Promise<T> {
    if (!this.client || !this.running) throw new Error('Mira is not running: see the "Mira" output.');
    return this.client.sendRequest(method, params);
  }

  /** Palette, code actions and keybindings all come through here. */
  private async execute(command: string, args: any[], next: (c: string, a: any[]) => any) {
    let filled: unknown[] | undefined;
    try {
      filled = await fillArguments(command, args, editorSpot(this.userEditor()), {
        input: (prompt, placeHolder) => Promise.resolve(vscode.window.showInputBox({ prompt, placeHolder, ignoreFocusOut: true })),
        number: async (prompt) => parseId(await vscode.window.showInputBox({ prompt, validateInput: (v) => (parseId(v) === undefined ? 'A number, like 12' : undefined) })),
      });
    } catch (e) {
      void vscode.window.showWarningMessage(String((e as Error).message ?? e));
      return undefined;
    }
    if (!filled) return undefined;
    if (command === 'mira.openConversation') this.openingTranscript = true;
    try {
      const result = await next(command, filled as any[]);
      if (STARTS_TURN.has(command) && result && typeof result.turn === 'string') this.turns.fire(result.turn);
      if (command === 'mira.recall') void showRecall(result);
      if (command === 'mira.remember' || command === 'mira.forget') this.memoriesChanged.fire();
      return result;
    } finally {
      if (command === 'mira.openConversation') setTimeout(() => (this.openingTranscript = false), 3000);
    }
  }

  readonly memoriesChanged = new vscode.EventEmitter<void>();

  /** The extension is being deactivated: stop quietly (no events, no restarts). */
  disposing(): void {
    this.disposed = true;
  }

  dispose(): void {
    this.disposed = true;
    void this.stop();
    this.events.dispose();
    this.ready.dispose();
    this.turns.dispose();
    this.memoriesChanged.dispose();
    this.transcripts.dispose();
  }
}

async function showRecall(result: any) {
  const memories: any[] = result?.memories ?? [];
  if (!memories.length) return;
  await vscode.window.showQuickPick(
    memories.map((m) => ({ label: `#${m.id} ${m.body}`, description: `${m.kind}${m.stale ? ' · stale' : ''}` })),
    { title: 'Mira recalls', canPickMany: false },
  );
}
