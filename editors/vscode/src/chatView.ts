// The chat view in the side bar: the global conversation (`mira/history`, older turns on
// scroll), live turns from `mira/*` notifications, questions with the editor as context.
import * as path from 'path';
import * as vscode from 'vscode';
import { MiraClient, editorSpot } from './client';
import { chatHtml, newNonce } from './page';
import type { FromPage, ToPage } from './webview/protocol';
import type { HistoryTurn, ServerEvent } from './webview/state';

const PAGE = 20;

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = 'mira.chat';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** Events that arrive while the page loads or its history is in flight. */
  private queue: ServerEvent[] | undefined;
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly mira: MiraClient,
  ) {
    this.subs.push(
      mira.onEvent((e) => this.onEvent(e)),
      mira.onReady((up) => up && this.ready && void this.loadHistory()),
      mira.onTurnCommand(() => this.reveal()),
      vscode.window.onDidChangeActiveTextEditor(() => this.sendContext()),
      vscode.window.onDidChangeTextEditorSelection(() => this.sendContext()),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = chatHtml({
      cspSource: view.webview.cspSource,
      nonce: newNonce(),
      script: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'chat.js')).toString(),
      style: view.webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString(),
    });
    view.webview.onDidReceiveMessage((m: FromPage) => this.onMessage(m));
    view.onDidDispose(() => {
      this.view = undefined;
      this.ready = false;
    });
  }

  /** Shows the view (opening the side bar) without taking focus from the editor. */
  reveal(): void {
    if (this.view) this.view.show(true);
    else void vscode.commands.executeCommand(`${ChatView.id}.focus`);
  }

  private post(m: ToPage) {
    void this.view?.webview.postMessage(m);
  }

  private onEvent(e: ServerEvent) {
    if (e.method === 'mira/turnStarted') this.reveal();
    if (!this.ready) return;
    if (this.queue) this.queue.push(e);
    else this.post({ type: 'event', event: e });
  }

  private async loadHistory(before?: string) {
    if (!before) this.queue = [];
    try {
      const turns = await this.mira.request<HistoryTurn[]>('mira/history', before ? { limit: PAGE, before } : { limit: PAGE });
      this.post({ type: 'history', turns, asked: PAGE, reset: !before });
    } catch (e) {
      this.post({ type: 'error', message: `Mira could not load the conversation: ${(e as Error).message ?? e}` });
    } finally {
      if (!before) {
        const q = this.queue ?? [];
        this.queue = undefined;
        for (const event of q) this.post({ type: 'event', event });
      }
    }
  }

  private sendContext() {
    if (!this.ready) return;
    const ed = vscode.window.activeTextEditor ?? this.mira.lastEditor;
    if (!ed) return this.post({ type: 'context', label: '' });
    const name = path.basename(ed.document.uri.fsPath);
    const s = ed.selection;
    const label = s.isEmpty ? `${name}:${s.active.line + 1}` : `${name}:${s.start.line + 1}-${s.end.line + 1} (selection)`;
    this.post({ type: 'context', label: `with ${label}` });
  }

  private async onMessage(m: FromPage) {
    switch (m.type) {
      case 'ready':
        this.ready = true;
        this.sendContext();
        if (this.mira.running) await this.loadHistory();
        return;
      case 'loadOlder':
        return this.loadHistory(m.before);
      case 'ask': {
        const spot = m.withContext ? editorSpot(vscode.window.activeTextEditor ?? this.mira.lastEditor) : undefined;
        const empty = spot && spot.selection.start.line === spot.selection.end.line && spot.selection.start.character === spot.selection.end.character;
        const args = spot
          ? { question: m.question, uri: spot.uri, position: spot.selection.start, ...(empty ? {} : { range: spot.selection }) }
          : { question: m.question };
        try {
          await this.mira.command('mira.ask', [args]);
        } catch (e) {
          this.post({ type: 'error', message: `Mira: ${(e as Error).message ?? e}` });
        }
        return;
      }
      case 'cancel':
        try {
          await this.mira.command('mira.cancel', m.turn ? [{ turn: m.turn }] : []);
        } catch (e) {
          this.post({ type: 'error', message: `Mira: ${(e as Error).message ?? e}` });
        }
        return;
      case 'copy':
        await vscode.env.clipboard.writeText(m.text);
        void vscode.window.setStatusBarMessage('Mira: copied', 2000);
        return;
      case 'insert': {
        const ed = vscode.window.activeTextEditor ?? this.mira.lastEditor;
        if (!ed) {
          void vscode.window.showWarningMessage('Mira: open an editor to insert the code into.');
          return;
        }
        await ed.edit((b) => {
          for (const sel of ed.selections) b.replace(sel, m.text);
        });
        return;
      }
    }
  }

  dispose(): void {
    this.subs.forEach((s) => s.dispose());
  }
}
