// The chat view in the side bar: the global conversation (`mira/history`, older turns on
// scroll), live turns from `mira/*` notifications, questions with the editor as context.
import * as path from 'path';
import * as vscode from 'vscode';
import { MiraClient, editorSpot } from './client';
import { chatHtml, newNonce } from './page';
import type { FromPage, ToPage } from './webview/protocol';
import { Conversation, HistoryTurn, ServerEvent } from './webview/state';

const PAGE = 20;

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = 'mira.chat';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** History and live events joined by turn id; it records live turns from activation on,
   * whether or not the view exists, so the page only ever gets whole turns to show. */
  readonly conversation = new Conversation();
  /** Only the newest fresh load of the history may reset the page. */
  private loads = 0;
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

  /** Live events so far (to tell how many arrived while a history request was in flight). */
  private heard = 0;

  private onEvent(e: ServerEvent) {
    this.heard++;
    const id = this.conversation.onEvent(e);
    if (e.method === 'mira/turnStarted') this.reveal();
    if (!this.ready) return;
    // A turn heard of mid-way (notifications turned on during it) has no complete live record:
    // its tool calls and its end come from the store, which holds a call before it is announced.
    if ((e.method === 'mira/toolCall' || e.method === 'mira/turnFinished') && !this.conversation.sawStart(id) && this.mira.running) {
      return void this.loadHistory();
    }
    const turn = this.conversation.turn(id);
    if (turn) this.post({ type: 'turn', turn });
  }

  /** A fresh load (the page then shows exactly the joined conversation), or an older page. */
  private async loadHistory(before?: string) {
    const load = before ? this.loads : ++this.loads;
    const heard = this.heard;
    try {
      const turns = await this.mira.request<HistoryTurn[]>('mira/history', before ? { limit: PAGE, before } : { limit: PAGE });
      if (load !== this.loads || !this.ready) return;
      const running = turns.filter((t) => t.status === 'running').length;
      if (!before && (running || this.heard > heard)) {
        this.mira.log(`chat: history loaded with ${running} running turn(s); ${this.heard - heard} live event(s) came during the request`);
      }
      this.conversation.addHistory(turns, PAGE);
      if (before) this.post({ type: 'older', turns: this.conversation.older(turns), moreBefore: this.conversation.moreBefore });
      else this.post({ type: 'reset', turns: this.conversation.view(turns, PAGE), moreBefore: this.conversation.moreBefore });
    } catch (e) {
      this.post({ type: 'error', message: `Mira could not load the conversation: ${(e as Error).message ?? e}` });
    }
  }

  private sendContext() {
    if (!this.ready) return;
    const ed = this.mira.userEditor();
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
        const spot = m.withContext ? editorSpot(this.mira.userEditor()) : undefined;
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
        const ed = this.mira.userEditor();
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
