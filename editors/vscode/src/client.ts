// The language client: starts `mira lsp`, restarts it when it crashes (saying so), fills in
// command arguments from the editor, and hands Mira's notifications to whoever listens.
import * as vscode from 'vscode';
import {
  CancellationToken,
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

export function miraSettings() {
  const c = vscode.workspace.getConfiguration('mira');
  return editorConfig((k) => c.get(k));
}

/** The active editor's spot in LSP terms, with diagnostics overlapping the selection. */
export function editorSpot(editor: vscode.TextEditor | undefined) {
  if (!editor) return undefined;
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
  lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
  ) {
    context.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e && e.document.uri.scheme !== 'output') this.lastEditor = e;
      }),
    );
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  async start(): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('mira');
    const found = resolveServer(cfg.get<string>('path'), process.env.PATH);
    if (!found.ok) {
      this.output.appendLine(found.message);
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
            const transcript = params.uri.endsWith('/conversation.md');
            const wanted = vscode.workspace.getConfiguration('mira').get<boolean>('chat.openTranscript');
            if (transcript && !params.external && !wanted && !this.openingTranscript) return { success: true };
            return next(params, token);
          },
        },
      },
    };
    const client = new LanguageClient('mira', 'Mira', serverOptions, clientOptions);
    client.registerFeature(new PreviewSwitch(cfg.get<boolean>('edits.preview') !== false));
    for (const method of NOTIFICATIONS) {
      client.onNotification(method, (params: any) => this.events.fire({ method, params } as ServerEvent));
    }
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.ready.fire(true);
    });
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      this.output.appendLine(`Mira: the server did not start: ${e}`);
      this.ready.fire(false);
      void vscode.window.showErrorMessage(`Mira: the server did not start (${e}). See the "Mira" output.`);
    }
  }

  private openingTranscript = false;

  private onClosed() {
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

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) {
      try {
        await c.stop();
      } catch {
        // already gone
      }
    }
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
      filled = await fillArguments(command, args, editorSpot(vscode.window.activeTextEditor ?? this.lastEditor), {
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

  dispose(): void {
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
