// "Mira: Choose Model": the models of the provider's server (`mira.models` on the server, the
// same list as `mira models`) in a QuickPick, the one in use marked; the pick is written to the
// `mira.model` setting, which reaches the server by workspace/didChangeConfiguration.
import * as vscode from 'vscode';

/** `mira.models`' result (docs/lsp-contract.md). */
export interface ModelList {
  model: string;
  baseUrl: string;
  available: boolean;
  window: number;
  windowDescribed: string;
  models: { id: string; window?: number; inUse: boolean }[];
}

export interface ModelItem {
  label: string;
  description?: string;
  id: string;
}

/** The QuickPick's rows: the model in use first and marked, then the rest in the server's order. */
export function modelItems(list: ModelList): ModelItem[] {
  const rows = list.models.map((m) => ({
    id: m.id,
    label: m.id,
    description: [m.inUse ? '$(check) in use' : '', m.window ? `${m.window} tokens` : ''].filter(Boolean).join(' · ') || undefined,
  }));
  return [...rows.filter((r) => r.id === list.model), ...rows.filter((r) => r.id !== list.model)];
}

export function modelPlaceholder(list: ModelList): string {
  const where = `the models at ${list.baseUrl}`;
  return list.available ? `${where}; in use: ${list.model}` : `${where}; the server has no model \`${list.model}\`: pick one`;
}

/** Where the choice goes: the settings layer that sets `mira.model` now (a workspace's own
 * value would hide a User one), else User settings. */
export function modelTarget(inspected: { workspaceFolderValue?: unknown; workspaceValue?: unknown } | undefined): 'folder' | 'workspace' | 'user' {
  if (inspected?.workspaceFolderValue !== undefined) return 'folder';
  if (inspected?.workspaceValue !== undefined) return 'workspace';
  return 'user';
}

export interface ModelSource {
  command<T>(command: string, args?: unknown[]): Promise<T>;
}

export async function chooseModel(mira: ModelSource): Promise<string | undefined> {
  let list: ModelList;
  try {
    list = await mira.command<ModelList>('mira.models');
  } catch (e) {
    // The server said why with window/showMessage already; an error without a code is the
    // extension's own (the server is not running).
    if ((e as { code?: number }).code === undefined) void vscode.window.showErrorMessage(String((e as Error).message ?? e));
    return undefined;
  }
  if (!list.models.length) {
    void vscode.window.showWarningMessage(`Mira: the server at ${list.baseUrl} lists no models.`);
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(modelItems(list), { title: 'Mira: Choose Model', placeHolder: modelPlaceholder(list) });
  if (!pick || pick.id === list.model) return pick?.id;
  const cfg = vscode.workspace.getConfiguration('mira');
  const target = modelTarget(cfg.inspect('model'));
  await cfg.update(
    'model',
    pick.id,
    target === 'folder' ? vscode.ConfigurationTarget.WorkspaceFolder : target === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global,
  );
  return pick.id;
}
