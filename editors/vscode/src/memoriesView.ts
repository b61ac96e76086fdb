// The memories view: memories by kind (from `mira/memories`), forget / restore / correct from
// the context menu, anchored memories open their symbol.
import * as vscode from 'vscode';
import { MiraClient } from './client';
import { Group, groups, Memory, memoryDescription, memoryLabel } from './memories';

type Node = { group: Group } | { memory: Memory; forgotten: boolean };

export class MemoriesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  static readonly id = 'mira.memories';
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private active: Memory[] = [];
  private forgotten: Memory[] = [];
  private error: string | undefined;
  private readonly subs: vscode.Disposable[] = [];

  constructor(private readonly mira: MiraClient) {
    this.subs.push(
      mira.onReady((up) => up && void this.refresh()),
      mira.memoriesChanged.event(() => void this.refresh()),
      // The model may remember or forget during a turn.
      mira.onEvent((e) => e.method === 'mira/turnFinished' && void this.refresh()),
    );
  }

  async refresh(): Promise<void> {
    try {
      const r = await this.mira.request<{ memories: Memory[] }>('mira/memories', { limit: 200 });
      this.active = r.memories;
      this.error = undefined;
    } catch (e) {
      this.error = (e as Error).message ?? String(e);
    }
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      if (this.error) return [];
      return groups(this.active, this.forgotten).map((group) => ({ group }));
    }
    if ('group' in node) return node.group.items.map((memory) => ({ memory, forgotten: node.group.id === 'forgotten' }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ('group' in node) {
      const item = new vscode.TreeItem(node.group.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${node.group.id}`;
      item.description = String(node.group.items.length);
      return item;
    }
    const m = node.memory;
    const item = new vscode.TreeItem(memoryLabel(m), vscode.TreeItemCollapsibleState.None);
    item.id = `${node.forgotten ? 'forgotten' : 'memory'}:${m.id}`;
    item.description = memoryDescription(m);
    item.tooltip = new vscode.MarkdownString().appendText(m.body).appendMarkdown(`\n\n*${m.kind} #${m.id}*`);
    item.contextValue = node.forgotten ? 'forgotten' : 'memory';
    item.iconPath = new vscode.ThemeIcon(m.stale ? 'warning' : node.forgotten ? 'circle-slash' : 'note');
    const anchor = m.anchors?.[0];
    if (anchor?.uri) {
      item.command = { command: 'mira.memories.open', title: 'Open the anchored symbol', arguments: [m] };
    }
    return item;
  }

  async forget(node: Node | undefined): Promise<void> {
    if (!node || !('memory' in node)) return;
    const m = node.memory;
    await this.run(() => this.mira.command('mira.forget', [{ id: m.id }]));
    this.forgotten = [{ ...m, status: 'retracted' }, ...this.forgotten.filter((f) => f.id !== m.id)];
    await this.refresh();
  }

  async restore(node: Node | undefined): Promise<void> {
    if (!node || !('memory' in node)) return;
    const m = node.memory;
    await this.run(() => this.mira.command('mira.forget', [{ id: m.id, restore: true }]));
    this.forgotten = this.forgotten.filter((f) => f.id !== m.id);
    await this.refresh();
  }

  async correct(node: Node | undefined): Promise<void> {
    if (!node || !('memory' in node)) return;
    const m = node.memory;
    const text = await vscode.window.showInputBox({ prompt: `Correct memory #${m.id}`, value: m.body, ignoreFocusOut: true });
    if (!text?.trim() || text.trim() === m.body.trim()) return;
    await this.run(() => this.mira.command('mira.remember', [{ text, kind: 'correction', corrects: m.id }]));
    await this.refresh();
  }

  async open(m: Memory): Promise<void> {
    const a = m.anchors?.[0];
    if (!a?.uri) return;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(a.uri));
    const r = a.range as { start: { line: number; character: number } } | undefined;
    const pos = r ? new vscode.Position(r.start.line, r.start.character) : new vscode.Position(0, 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos) });
  }

  private async run(f: () => Promise<unknown>) {
    try {
      await f();
    } catch (e) {
      void vscode.window.showErrorMessage(`Mira: ${(e as Error).message ?? e}`);
      throw e;
    }
  }

  dispose(): void {
    this.subs.forEach((s) => s.dispose());
    this.changed.dispose();
  }
}
