// A small stand-in for the `vscode` module: enough of the API for the extension's logic to
// run under `node --test`, recording what the extension asked VS Code to do.
/* eslint-disable @typescript-eslint/no-explicit-any */

export const calls: { [what: string]: any[] } = {};
function record(what: string, ...args: any[]) {
  (calls[what] ??= []).push(args);
}
export function resetCalls() {
  for (const k of Object.keys(calls)) delete calls[k];
  settings.clear();
  inputAnswers.length = 0;
  quickPickAnswers.length = 0;
}

export class Disposable {
  constructor(private readonly f: () => void = () => {}) {}
  dispose() {
    this.f();
  }
}

export class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (l: (e: T) => void) => {
    this.listeners.push(l);
    return new Disposable(() => (this.listeners = this.listeners.filter((x) => x !== l)));
  };
  fire(e: T) {
    for (const l of [...this.listeners]) l(e);
  }
  dispose() {
    this.listeners = [];
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    this.start = typeof a === 'number' ? new Position(a, b as number) : a;
    this.end = typeof a === 'number' ? new Position(c!, d!) : (b as Position);
  }
  get isEmpty() {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
  intersection(_r: Range) {
    return this;
  }
}
export class Selection extends Range {
  get active() {
    return this.end;
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly fsPath: string,
  ) {}
  static file(p: string) {
    return new Uri('file', p);
  }
  static parse(s: string) {
    return new Uri(s.split(':')[0], s.replace(/^file:\/\//, ''));
  }
  static joinPath(u: Uri, ...parts: string[]) {
    return new Uri(u.scheme, [u.fsPath, ...parts].join('/'));
  }
  toString() {
    return `${this.scheme}://${this.fsPath}`;
  }
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}
export class MarkdownString {
  value = '';
  appendText(t: string) {
    this.value += t;
    return this;
  }
  appendMarkdown(t: string) {
    this.value += t;
    return this;
  }
}
export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}
export class TreeItem {
  id?: string;
  description?: string;
  tooltip?: any;
  contextValue?: string;
  iconPath?: any;
  command?: any;
  constructor(
    readonly label: string,
    readonly collapsibleState: TreeItemCollapsibleState,
  ) {}
}
export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

/** Every `onDid…`/`onWill…` event the code under test subscribes to, as a no-op. */
function withEvents<T extends object>(o: T): T {
  return new Proxy(o, {
    get(target: any, key: string | symbol) {
      if (key in target) return target[key];
      if (typeof key === 'string' && /^on(Did|Will)/.test(key)) return (_l: unknown) => new Disposable();
      return undefined;
    },
  });
}

export const settings = new Map<string, unknown>();
export const inputAnswers: (string | undefined)[] = [];
/** Picks the next QuickPick answers: given the items, returns the one chosen (or undefined). */
export const quickPickAnswers: ((items: any[]) => any)[] = [];
export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

export const workspace = withEvents({
  getConfiguration: (section: string) => ({
    get: (k: string) => settings.get(`${section}.${k}`),
    inspect: (k: string) => ({ key: `${section}.${k}`, globalValue: settings.get(`${section}.${k}`) }),
    update: async (k: string, v: unknown, target?: ConfigurationTarget) => {
      record('configuration.update', `${section}.${k}`, v, target);
      settings.set(`${section}.${k}`, v);
    },
  }),
  onDidChangeConfiguration: (_l: any) => new Disposable(),
  openTextDocument: async (u: Uri) => ({ uri: u }),
  textDocuments: [] as any[],
  notebookDocuments: [] as any[],
  workspaceFolders: undefined as any,
});

export const window = withEvents({
  activeTextEditor: undefined as any,
  createOutputChannel: (name: string) => ({
    name,
    appendLine: (l: string) => record('output', l),
    trace: (l: string) => record('output', l),
    debug: (l: string) => record('output', l),
    info: (l: string) => record('output', l),
    warn: (l: string) => record('output', l),
    error: (l: string) => record('output', l),
    show: () => record('output.show'),
    dispose() {},
  }),
  createStatusBarItem: () => ({ text: '', tooltip: '', command: '', name: '', show: () => record('statusBar.show'), dispose() {} }),
  registerWebviewViewProvider: (id: string) => (record('registerWebviewViewProvider', id), new Disposable()),
  createTreeView: (id: string) => (record('createTreeView', id), new Disposable()),
  showErrorMessage: async (m: string, ...items: string[]) => (record('showErrorMessage', m, ...items), undefined),
  showWarningMessage: async (m: string) => (record('showWarningMessage', m), undefined),
  showInformationMessage: async (m: string) => (record('showInformationMessage', m), undefined),
  showInputBox: async (o: any) => (record('showInputBox', o), inputAnswers.shift()),
  showQuickPick: async (items: any, options?: any) => (record('showQuickPick', items, options), quickPickAnswers.shift()?.(items)),
  showTextDocument: async (doc: any, o: any) => record('showTextDocument', doc, o),
  setStatusBarMessage: (m: string) => (record('setStatusBarMessage', m), new Disposable()),
  onDidChangeActiveTextEditor: (_l: any) => new Disposable(),
  onDidChangeTextEditorSelection: (_l: any) => new Disposable(),
  visibleTextEditors: [] as any[],
});

export const commands = {
  registered: new Map<string, (...a: any[]) => any>(),
  registerCommand(id: string, f: (...a: any[]) => any) {
    commands.registered.set(id, f);
    return new Disposable(() => commands.registered.delete(id));
  },
  executeCommand: async (id: string, ...args: any[]) => record('executeCommand', id, ...args),
};

export const languages = withEvents({
  getDiagnostics: (_u: Uri) => [] as any[],
});
export const notebooks = withEvents({});
export const extensions = withEvents({ all: [] as any[] });

export const env = {
  clipboard: { writeText: async (t: string) => record('clipboard', t) },
};

// Classes vscode-languageclient extends or references when it loads; unused by these tests.
class Stub {
  constructor(..._args: unknown[]) {}
}
export class CompletionItem extends Stub {}
export class CodeAction extends Stub {}
export class CodeLens extends Stub {}
export class DocumentLink extends Stub {}
export class InlayHint extends Stub {}
export class TypeHierarchyItem extends Stub {}
export class CallHierarchyItem extends Stub {}
export class SymbolInformation extends Stub {}
export class DocumentSymbol extends Stub {}
export class Diagnostic extends Stub {}
export class WorkspaceEdit extends Stub {}
export class InlineCompletionItem extends Stub {}
export class CancellationTokenSource extends Stub {}
export class CancellationError extends Error {}
export enum LogLevel {
  Off = 0,
  Trace = 1,
  Debug = 2,
  Info = 3,
  Warning = 4,
  Error = 5,
}
class Kind {
  constructor(readonly value: string) {}
  append(part: string) {
    return new Kind(this.value ? `${this.value}.${part}` : part);
  }
}
export const CodeActionKind = {
  Empty: new Kind(''),
  QuickFix: new Kind('quickfix'),
  Refactor: new Kind('refactor'),
  RefactorExtract: new Kind('refactor.extract'),
  RefactorInline: new Kind('refactor.inline'),
  RefactorRewrite: new Kind('refactor.rewrite'),
  Source: new Kind('source'),
  SourceOrganizeImports: new Kind('source.organizeImports'),
  SourceFixAll: new Kind('source.fixAll'),
  Notebook: new Kind('notebook'),
};
export const version = '1.99.3';
