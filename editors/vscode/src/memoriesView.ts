// The memories view: memories by kind (from `mira/memories`), goals with their milestones
// (from `mira/goals`, when the server offers it), forget / restore / correct from the context
// menu, anchored memories open their symbol.
import * as vscode from 'vscode';
import { MiraClient } from './client';
import { anchorLabel, Goal, goalDescription, Group, groups, Memory, memoryDescription, memoryLabel, symbolName } from './memories';

type Node =
  | { group: Group }
  | { goals: Goal[] }
  | { goal: Goal }
  | { milestone: Goal['milestones'][number] }
  | { memory: Memory; forgotten: boolean };

/** JSON-RPC "method not found": a server without `mira/goals`. */
const METHOD_NOT_FOUND = -32601;

export class MemoriesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  static readonly id = 'mira.memories';
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private active: Memory[] = [];
  private forgotten: Memory[] = [];
  private goals: Goal[] = [];
  private readonly subs: vscode.Disposable[] = [];

  constructor(private readonly mira: MiraClient) {
    this.subs.push(
      mira.onReady((up) => up && void this.refresh()),
      mira.memoriesChanged.event(() => void this.refresh()),
      // The model may remember, forget or update goals during a turn.
      mira.onEvent((e) => e.method === 'mira/turnFinished' && void this.refresh()),
    );
  }

  async refresh(): Promise<void> {
    try {
      const r = await this.mira.request<{ memories: Memory[] }>('mira/memories', { limit: 200 });
      this.active = r.memories;
    } catch (e) {
      this.mira.output?.warn(`Mira: could not list memories: ${(e as Error).message ?? e}`);
    }
    try {
      const r = await this.mira.request<{ goals: Goal[] }>('mira/goals', {});
      this.goals = r.goals ?? [];
    } catch (e) {
      this.goals = [];
      if ((e as { code?: number }).code !== METHOD_NOT_FOUND) {
        this.mira.output?.warn(`Mira: could not list goals: ${(e as Error).message ?? e}`);
      }
    }
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const all = groups(this.active, this.forgotten);
      const memories = all.filter((g) => g.id !== 'forgotten').map((group): Node => ({ group }));
      const goals: Node[] = this.goals.length ? [{ goals: this.goals }] : [];
      const forgotten = all.filter((g) => g.id === 'forgotten').map((group): Node => ({ group }));
      return [...goals, ...memories, ...forgotten];
    }
    if ('group' in node) return node.group.items.map((memory) => ({ memory, forgotten: node.group.id === 'forgotten' }));
    if ('goals' in node) return node.goals.map((goal) => ({ goal }));
    if ('goal' in node) return node.goal.milestones.map((milestone) => ({ milestone }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ('group' in node || 'goals' in node) {
      const [id, label, n] = 'group' in node ? [node.group.id, node.group.label, node.group.items.length] : ['goals', 'Goals', node.goals.length];
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${id}`;
      item.description = String(n);
      return item;
    }
    if ('goal' in node) {
      const g = node.goal;
      const item = new vscode.TreeItem(g.title, g.milestones.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
      item.id = `goal:${g.id}`;
      item.description = goalDescription(g);
      item.tooltip = g.description || g.title;
      item.iconPath = new vscode.ThemeIcon('target');
      return item;
    }
    if ('milestone' in node) {
      const m = node.milestone;
      const item = new vscode.TreeItem(m.title, vscode.TreeItemCollapsibleState.None);
      item.id = `milestone:${m.id}`;
      item.iconPath = new vscode.ThemeIcon(m.done ? 'pass-filled' : 'circle-large-outline');
      return item;
    }
    const m = node.memory;
    const item = new vscode.TreeItem(memoryLabel(m), vscode.TreeItemCollapsibleState.None);
    item.id = `${node.forgotten ? 'forgotten' : 'memory'}:${m.id}`;
    item.description = memoryDescription(m);
    item.tooltip = new vscode.MarkdownString().appendText(m.body).appendMarkdown(`\n\n*${m.kind} #${m.id}*`);
    item.contextValue = node.forgotten ? 'forgotten' : 'memory';
    item.iconPath = new vscode.ThemeIcon(m.stale ? 'warning' : node.forgotten ? 'circle-slash' : 'note');
    if (anchorLabel(m)) {
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

  /** Opens the file an anchored memory points at, on its symbol when the file still has it. */
  async open(m: Memory): Promise<void> {
    const a = m.anchors?.[0]?.anchor;
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!a || !folder) return;
    const uri = vscode.Uri.joinPath(folder.uri, ...a.path.split('/'));
    let selection: vscode.Range | undefined;
    try {
      const symbols = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>('vscode.executeDocumentSymbolProvider', uri);
      selection = findSymbol(symbols ?? [], symbolName(a.symbol))?.selectionRange;
    } catch {
      // no symbols: open at the top
    }
    await vscode.window.showTextDocument(uri, selection ? { selection } : {});
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

function findSymbol(symbols: vscode.DocumentSymbol[], name: string): vscode.DocumentSymbol | undefined {
  for (const s of symbols) {
    if (s.name === name) return s;
    const inner = findSymbol(s.children ?? [], name);
    if (inner) return inner;
  }
  return undefined;
}
