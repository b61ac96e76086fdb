// The memories view: memories by kind (from `mira/memories`), goals with their milestones and
// tasks (`mira/goals`, `mira/tasks`), the tasks of no goal, and the forgotten memories
// (`mira/memories {status: "retracted"}`, so one forgotten in another window or session can be
// restored too); forget / restore / correct from the context menu; anchored memories open
// their symbol.
import * as vscode from 'vscode';
import { MiraClient } from './client';
import { anchorLabel, Goal, goalDescription, Group, groups, Memory, memoryDescription, memoryLabel, symbolName, Task, taskDescription, tasksOf } from './memories';

type Node =
  | { group: Group }
  | { goals: Goal[] }
  | { goal: Goal }
  | { milestone: Goal['milestones'][number] }
  | { tasks: Task[] }
  | { task: Task }
  | { memory: Memory; forgotten: boolean };

/** JSON-RPC "method not found": an older server without this request. */
const METHOD_NOT_FOUND = -32601;

export class MemoriesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  static readonly id = 'mira.memories';
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private active: Memory[] = [];
  private forgotten: Memory[] = [];
  private goals: Goal[] = [];
  private tasks: Task[] = [];
  private readonly subs: vscode.Disposable[] = [];

  constructor(private readonly mira: MiraClient) {
    this.subs.push(
      mira.onReady((up) => up && void this.refresh()),
      mira.memoriesChanged.event(() => void this.refresh()),
      // The model may remember, forget or update goals during a turn.
      mira.onEvent((e) => e.method === 'mira/turnFinished' && void this.refresh()),
    );
  }

  /** The refresh in flight, and whether another was asked for meanwhile. */
  private inFlight: Promise<void> | undefined;
  private again = false;

  /**
   * Lists everything again. Refreshes never overlap: one asked for while another runs starts
   * when it ends (and several such become one), so an older answer can never land after a
   * newer one, and the view always ends on the latest state.
   */
  refresh(): Promise<void> {
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    this.inFlight = (async () => {
      try {
        do {
          this.again = false;
          await this.load();
        } while (this.again);
      } finally {
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }

  private async load(): Promise<void> {
    const [active, forgotten, goals, tasks] = await Promise.all([
      this.list<{ memories: Memory[] }>('mira/memories', { limit: 200 }, 'memories'),
      this.list<{ memories: Memory[] }>('mira/memories', { status: 'retracted', limit: 50 }, 'forgotten memories'),
      this.list<{ goals: Goal[] }>('mira/goals', {}, 'goals'),
      this.list<{ tasks: Task[] }>('mira/tasks', {}, 'tasks'),
    ]);
    if (active) this.active = active.memories;
    if (forgotten) this.forgotten = forgotten.memories;
    // Each memory once: one forgotten between the two requests is listed as forgotten.
    const gone = new Set(this.forgotten.map((m) => m.id));
    this.active = dedupeById(this.active).filter((m) => !gone.has(m.id));
    this.forgotten = dedupeById(this.forgotten);
    this.goals = goals?.goals ?? [];
    this.tasks = tasks?.tasks ?? [];
    this.changed.fire(undefined);
  }

  /** One request; a failure is logged (an unknown method quietly: an older server). */
  private async list<T>(method: string, params: object, what: string): Promise<T | undefined> {
    try {
      return await this.mira.request<T>(method, params);
    } catch (e) {
      if ((e as { code?: number }).code !== METHOD_NOT_FOUND) {
        this.mira.log?.(`Mira: could not list ${what}: ${(e as Error).message ?? e}`);
      }
      return undefined;
    }
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      const all = groups(this.active, this.forgotten);
      const memories = all.filter((g) => g.id !== 'forgotten').map((group): Node => ({ group }));
      const goals: Node[] = this.goals.length ? [{ goals: this.goals }] : [];
      const loose = tasksOf(this.tasks, this.goals, undefined);
      const tasks: Node[] = loose.length ? [{ tasks: loose }] : [];
      const forgotten = all.filter((g) => g.id === 'forgotten').map((group): Node => ({ group }));
      return [...goals, ...tasks, ...memories, ...forgotten];
    }
    if ('group' in node) return node.group.items.map((memory) => ({ memory, forgotten: node.group.id === 'forgotten' }));
    if ('goals' in node) return node.goals.map((goal) => ({ goal }));
    if ('tasks' in node) return node.tasks.map((task) => ({ task }));
    if ('goal' in node) {
      const milestones = node.goal.milestones.map((milestone): Node => ({ milestone }));
      const tasks = tasksOf(this.tasks, this.goals, node.goal.id).map((task): Node => ({ task }));
      return [...milestones, ...tasks];
    }
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if ('group' in node || 'goals' in node || 'tasks' in node) {
      const [id, label, n] =
        'group' in node ? [node.group.id, node.group.label, node.group.items.length]
        : 'goals' in node ? ['goals', 'Goals', node.goals.length]
        : ['tasks', 'Tasks', node.tasks.length];
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${id}`;
      item.description = String(n);
      return item;
    }
    if ('goal' in node) {
      const g = node.goal;
      const children = g.milestones.length + tasksOf(this.tasks, this.goals, g.id).length;
      const item = new vscode.TreeItem(g.title, children ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
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
    if ('task' in node) {
      const t = node.task;
      const item = new vscode.TreeItem(t.title, vscode.TreeItemCollapsibleState.None);
      item.id = `task:${t.id}`;
      item.description = taskDescription(t);
      item.contextValue = 'task';
      item.iconPath = new vscode.ThemeIcon(t.status === 'doing' ? 'play-circle' : 'tasklist');
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
    await this.refresh();
  }

  async restore(node: Node | undefined): Promise<void> {
    if (!node || !('memory' in node)) return;
    const m = node.memory;
    await this.run(() => this.mira.command('mira.forget', [{ id: m.id, restore: true }]));
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

function dedupeById(ms: Memory[]): Memory[] {
  const seen = new Set<number>();
  return ms.filter((m) => !seen.has(m.id) && (seen.add(m.id), true));
}

function findSymbol(symbols: vscode.DocumentSymbol[], name: string): vscode.DocumentSymbol | undefined {
  for (const s of symbols) {
    if (s.name === name) return s;
    const inner = findSymbol(s.children ?? [], name);
    if (inner) return inner;
  }
  return undefined;
}
