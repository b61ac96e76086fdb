// VS Code settings → Mira's editor configuration layer (`initializationOptions.mira` and
// `workspace/didChangeConfiguration`). Pure: takes a getter, so tests need no VS Code.
// API keys are deliberately absent: they travel in the server's environment (see secrets.ts).

/** Reads one `mira.*` setting (the part after `mira.`). */
export type SettingGetter = (key: string) => unknown;

/** The editor layer of Mira's config, in the server's own key names (snake_case sections). */
export interface MiraEditorConfig {
  notifications: boolean;
  provider?: { name?: string; model?: string; base_url?: string };
  agent: { bash: string; effort: string };
  edits: { confirm: boolean };
  memory?: { embedder: { provider: string; model?: string; base_url?: string } };
  /** `[completion]`: the server reads it at startup only (see RESTART_KEYS). */
  completion?: { provider?: string; model?: string; base_url?: string };
}

/** `[completion] provider` values the server knows (the manifest's enum lists the same). */
export const COMPLETION_PROVIDERS = ['chat', 'openai-completions', 'llama-cpp', 'ollama', 'deepseek', 'codestral'];

function text(get: SettingGetter, key: string): string | undefined {
  const v = get(key);
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

function oneOf(get: SettingGetter, key: string, allowed: string[], fallback: string): string {
  const v = text(get, key);
  return v !== undefined && allowed.includes(v) ? v : fallback;
}

/** Only what the user set is sent, so Mira's config files and environment still apply below. */
export function editorConfig(get: SettingGetter): MiraEditorConfig {
  const cfg: MiraEditorConfig = {
    notifications: get('notifications') !== false,
    agent: {
      bash: oneOf(get, 'bash', ['off', 'ask', 'on'], 'off'),
      effort: oneOf(get, 'effort', ['auto', 'none', 'low', 'medium', 'high', 'xhigh'], 'auto'),
    },
    edits: { confirm: get('edits.confirm') === true },
  };
  const provider = {
    name: text(get, 'provider'),
    model: text(get, 'model'),
    base_url: text(get, 'baseUrl'),
  };
  if (provider.name || provider.model || provider.base_url) {
    cfg.provider = dropUndefined(provider);
  }
  // `builtin` with no model is the server's own default, so it is the one setting not sent;
  // `none` is sent (it turns recall by meaning off), and so is `builtin` with a model
  // (`static` picks the older static table).
  const embedder = oneOf(get, 'embedder.provider', ['builtin', 'none', 'openai', 'ollama', 'local'], 'builtin');
  const embedderModel = text(get, 'embedder.model');
  if (embedder !== 'builtin' || embedderModel) {
    cfg.memory = {
      embedder: dropUndefined({
        provider: embedder,
        model: embedderModel,
        base_url: embedder === 'builtin' ? undefined : text(get, 'embedder.baseUrl'),
      }),
    };
  }
  const completionProvider = text(get, 'completion.provider');
  const completion = {
    provider: completionProvider && COMPLETION_PROVIDERS.includes(completionProvider) ? completionProvider : undefined,
    model: text(get, 'completion.model'),
    base_url: text(get, 'completion.baseUrl'),
  };
  if (completion.provider || completion.model || completion.base_url) {
    cfg.completion = dropUndefined(completion);
  }
  return cfg;
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/**
 * Settings whose change needs a new server process (the rest go by didChangeConfiguration):
 * the server builds its completer and advertises inline completion only at `initialize`.
 */
export const RESTART_KEYS = ['mira.path', 'mira.edits.preview', 'mira.completion'];
