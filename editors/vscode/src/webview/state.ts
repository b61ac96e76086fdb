// The chat's model: turns from `mira/history` joined with live `mira/*` notifications by turn
// id (the extension's `Conversation`), and the page's copy, which only replaces whole turns.
// Pure (no DOM, no VS Code) so it is unit-tested under node.

/** One entry of a turn as `mira/history` returns it (Rust `conversation::Entry`). */
export interface HistoryEntry {
  kind: 'user' | 'assistant' | 'reasoning' | 'tool_call' | 'tool_result';
  text: string;
  tool?: string;
  partial?: boolean;
  isError?: boolean;
  /** A tool call's summary, when the server sends one (else `text` is its JSON arguments). */
  summary?: string;
}

/** One turn as `mira/history` returns it (Rust `conversation::TurnView`). */
export interface HistoryTurn {
  turn: string;
  startedAt: number;
  status: TurnStatus;
  provider: string;
  model: string;
  error?: string | null;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  costUsd?: number | null;
  entries: HistoryEntry[];
}

export type TurnStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'limited';

export interface ToolChip {
  name: string;
  summary: string;
}

export interface ChatTurn {
  id: string;
  question: string;
  /** The answer's Markdown so far. */
  answer: string;
  tools: ToolChip[];
  status: TurnStatus;
  costUsd?: number;
  tokens?: { input: number; cached: number; output: number };
  error?: string;
  model?: string;
}

export interface ChatState {
  turns: ChatTurn[];
  /** False once `mira/history` returned fewer turns than asked: nothing older exists. */
  moreBefore: boolean;
}

export type ServerEvent =
  | { method: 'mira/turnStarted'; params: { turn: string; question: string } }
  | { method: 'mira/delta'; params: { turn: string; text: string } }
  | { method: 'mira/toolCall'; params: { turn: string; name: string; summary: string } }
  | {
      method: 'mira/turnFinished';
      params: {
        turn: string;
        status: TurnStatus;
        usage: { inputTokens: number; cachedTokens: number; outputTokens: number };
        costUsd?: number | null;
        error?: string;
      };
    };

export function emptyState(): ChatState {
  return { turns: [], moreBefore: true };
}

/** A JSON object's string field, or '' (what the server's `arg_str` does). */
function arg(args: Record<string, unknown>, key: string): string {
  const v = args[key];
  return typeof v === 'string' ? v : '';
}

/**
 * The one text of a tool chip, live and from history. Live, the server sends the tool's own
 * summary (`mira/toolCall {name, summary}`); `mira/history` sends the call's raw JSON
 * arguments, which this describes exactly as the tool's `describe` does on the server
 * (src/agent/tools/*.rs). A summary the server computed always wins.
 */
export function toolChipText(name: string, summary?: string, argsJson?: string): string {
  if (summary !== undefined && summary.trim() !== '' && !looksLikeJson(summary)) return summary;
  let args: Record<string, unknown> | undefined;
  try {
    const v = JSON.parse(argsJson ?? summary ?? '');
    if (v && typeof v === 'object' && !Array.isArray(v)) args = v;
  } catch {
    // not JSON: fall through
  }
  if (!args) return summary?.trim() ? summary : name;
  const id = (k: string) => (typeof args![k] === 'number' ? Math.trunc(args![k] as number) : 0);
  switch (name) {
    case 'read_file':
      return `read ${arg(args, 'path')}`;
    case 'write_file':
      return `write ${arg(args, 'path')}`;
    case 'edit_file':
      return `edit ${arg(args, 'path')}`;
    case 'grep':
      return `grep ${JSON.stringify(arg(args, 'pattern'))}`;
    case 'list_files': {
      const p = arg(args, 'path');
      const g = arg(args, 'glob');
      return `list files${p ? ` in ${p}` : ''}${g ? ` matching ${g}` : ''}`;
    }
    case 'search_code':
      return `search code for ${arg(args, 'query')}`;
    case 'find_symbol':
      return `find symbol ${arg(args, 'query')}`;
    case 'symbol_context':
      return `context of ${arg(args, 'name')}`;
    case 'bash':
      return `$ ${arg(args, 'command')}`;
    case 'remember':
      return `remember: ${arg(args, 'text')}`;
    case 'recall':
      return `recall ${arg(args, 'query')}`;
    case 'forget':
      return `forget #${id('id')}`;
    case 'read_artifact':
      return `read artifact #${id('id')}`;
    case 'goals':
      return `goals: ${arg(args, 'action')}`;
    case 'tasks':
      return `tasks: ${arg(args, 'action')}`;
    default:
      return name;
  }
}

function looksLikeJson(s: string): boolean {
  const t = s.trim();
  return t.startsWith('{') && t.endsWith('}');
}

export function fromHistory(t: HistoryTurn): ChatTurn {
  const text = (k: HistoryEntry['kind']) =>
    t.entries.filter((e) => e.kind === k && e.text !== '').map((e) => e.text);
  return {
    id: t.turn,
    question: text('user').join('\n\n'),
    answer: text('assistant').join('\n\n'),
    tools: t.entries
      .filter((e) => e.kind === 'tool_call')
      .map((e) => ({ name: e.tool ?? 'tool', summary: toolChipText(e.tool ?? 'tool', e.summary, e.text) })),
    status: t.status,
    costUsd: t.costUsd ?? undefined,
    tokens: { input: t.inputTokens, cached: t.cachedTokens, output: t.outputTokens },
    error: t.error ?? undefined,
    model: t.model,
  };
}

// ---- The page's side: it only ever replaces whole turns by id, so nothing it receives can
// show an entry twice.

/** The page's turns after a fresh load: the conversation as the extension merged it. */
export function resetTurns(turns: ChatTurn[], moreBefore: boolean): ChatState {
  return { turns: dedupe(turns), moreBefore };
}

/** Older turns go in front; ids already shown are skipped. */
export function prependTurns(s: ChatState, older: ChatTurn[], moreBefore: boolean): ChatState {
  const known = new Set(s.turns.map((t) => t.id));
  return { turns: [...dedupe(older).filter((t) => !known.has(t.id)), ...s.turns], moreBefore };
}

/** One turn as it is now: replaces the turn with its id, or joins at the end. */
export function upsertTurn(s: ChatState, t: ChatTurn): ChatState {
  const i = s.turns.findIndex((x) => x.id === t.id);
  if (i < 0) return { ...s, turns: [...s.turns, t] };
  const turns = s.turns.slice();
  turns[i] = t;
  return { ...s, turns };
}

function dedupe(turns: ChatTurn[]): ChatTurn[] {
  const seen = new Set<string>();
  return turns.filter((t) => !seen.has(t.id) && (seen.add(t.id), true));
}

/** What a message from the extension does to the page's turns (other messages: nothing). */
export function receive(s: ChatState, m: { type: string; turns?: ChatTurn[]; turn?: ChatTurn; moreBefore?: boolean }): ChatState {
  switch (m.type) {
    case 'reset':
      return resetTurns(m.turns!, m.moreBefore!);
    case 'older':
      return prependTurns(s, m.turns!, m.moreBefore!);
    case 'turn':
      return upsertTurn(s, m.turn!);
    default:
      return s;
  }
}

/** The id to pass as `before` when the user scrolls back. */
export function oldestTurn(s: ChatState): string | undefined {
  return s.turns[0]?.id;
}

// ---- The extension's side: one conversation joined from `mira/history` and live events.

/** A turn as its live notifications tell it, in arrival order. */
interface LiveTurn {
  id: string;
  /** Whether `mira/turnStarted` was seen: then every event of the turn was (one ordered
   * JSON-RPC stream, listened to since before the server started). */
  started: boolean;
  /** When it was first heard of (ms), to place it among history turns. */
  at: number;
  question: string;
  /** Answer text per model step: a tool call closes a step, as history stores them. */
  steps: string[];
  stepOpen: boolean;
  tools: ToolChip[];
  finished?: Extract<ServerEvent, { method: 'mira/turnFinished' }>['params'];
  /** For a turn not seen starting: its events after the latest history snapshot. */
  afterHistory: ServerEvent[];
}

/**
 * The chat's conversation in the extension host, joined by turn id:
 * - a turn `mira/history` reports finished is shown as history has it (the store is the truth;
 *   live events for it that arrive later change nothing);
 * - a turn this window saw start live is shown from its live events alone (they are complete),
 *   whatever a history snapshot taken mid-turn holds — so an entry is never counted twice;
 * - a turn only history knows is shown from history; one heard of mid-turn (not seen starting)
 *   shows history plus the events that came after that snapshot.
 * Live turns are recorded whether or not the chat view exists, so opening the view at any
 * moment (even while its history request is in flight) shows every entry exactly once.
 */
export class Conversation {
  private readonly history = new Map<string, HistoryTurn>();
  private readonly live = new Map<string, LiveTurn>();
  /** Whether the oldest loaded history page was full (more may exist before it). */
  moreBefore = true;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly keepFinished = 50,
  ) {}

  /** Records a live event; returns the id of the turn it changed. */
  onEvent(e: ServerEvent): string {
    const id = e.params.turn;
    let l = this.live.get(id);
    if (!l) {
      l = { id, started: false, at: this.now(), question: '', steps: [], stepOpen: false, tools: [], afterHistory: [] };
      this.live.set(id, l);
    }
    // A turn not seen starting shows a history snapshot plus what came after it; its tool
    // calls come from the store (stored before they are announced: see ChatView.onEvent).
    if (!l.started && e.method !== 'mira/toolCall') l.afterHistory.push(e);
    switch (e.method) {
      case 'mira/turnStarted':
        if (l.steps.length === 0 && l.tools.length === 0) l.started = true;
        l.question = e.params.question;
        break;
      case 'mira/delta':
        if (!l.stepOpen) l.steps.push('');
        l.stepOpen = true;
        l.steps[l.steps.length - 1] += e.params.text;
        break;
      case 'mira/toolCall':
        l.stepOpen = false;
        l.tools.push({ name: e.params.name, summary: toolChipText(e.params.name, e.params.summary) });
        break;
      case 'mira/turnFinished':
        l.finished = e.params;
        l.stepOpen = false;
        this.prune();
        break;
    }
    return id;
  }

  /** Takes in a `mira/history` answer (a fresh load, or an older page). */
  addHistory(turns: HistoryTurn[], asked: number): void {
    for (const t of turns) {
      this.history.set(t.turn, t);
      const l = this.live.get(t.turn);
      if (l && !l.started) l.afterHistory = [];
    }
    this.moreBefore = turns.length >= asked;
  }

  /** Whether this turn's live events are known from its start (so they are complete). */
  sawStart(id: string): boolean {
    return this.live.get(id)?.started ?? false;
  }

  /** One turn as the view shows it. */
  turn(id: string): ChatTurn | undefined {
    const h = this.history.get(id);
    const l = this.live.get(id);
    if (h && (h.status !== 'running' || !l)) return fromHistory(h);
    if (l && l.started) return fromLive(l);
    if (h && l) return l.afterHistory.reduce(applyEvent, fromHistory(h));
    return l ? fromLive(l) : undefined;
  }

  /** The view after a fresh load of `turns` from history: those, then the live turns history
   * did not hold yet (newer than the snapshot), in the order they started. */
  view(turns: HistoryTurn[], asked: number): ChatTurn[] {
    const ids = turns.map((t) => t.turn);
    const inHistory = new Set(ids);
    const oldest = turns[0]?.startedAt ?? -Infinity;
    const full = turns.length >= asked;
    const liveOnly = [...this.live.values()]
      .filter((l) => !inHistory.has(l.id) && !(full && l.at < oldest))
      .sort((a, b) => a.at - b.at)
      .map((l) => l.id);
    return [...ids, ...liveOnly].map((id) => this.turn(id)!).filter(Boolean);
  }

  /** Older history turns, joined with what is live. */
  older(turns: HistoryTurn[]): ChatTurn[] {
    return turns.map((t) => this.turn(t.turn)!).filter(Boolean);
  }

  /** Keeps the live record of running turns and of the newest finished ones. */
  private prune() {
    const finished = [...this.live.values()].filter((l) => l.finished);
    for (const l of finished.slice(0, Math.max(0, finished.length - this.keepFinished))) this.live.delete(l.id);
  }
}

function fromLive(l: LiveTurn): ChatTurn {
  const f = l.finished;
  return {
    id: l.id,
    question: l.question,
    answer: l.steps.filter((s) => s !== '').join('\n\n'),
    tools: l.tools,
    status: f ? f.status : 'running',
    ...(f
      ? {
          costUsd: f.costUsd ?? undefined,
          tokens: { input: f.usage.inputTokens, cached: f.usage.cachedTokens, output: f.usage.outputTokens },
          error: f.error,
        }
      : {}),
  };
}

/** Applies one live event to a turn shown from a history snapshot (a turn not seen starting). */
export function applyEvent(t: ChatTurn, e: ServerEvent): ChatTurn {
  return applyTo(t, e);
}

function applyTo(t: ChatTurn, e: ServerEvent): ChatTurn {
  switch (e.method) {
    case 'mira/turnStarted':
      return { ...t, question: e.params.question, status: 'running' };
    case 'mira/delta':
      return { ...t, answer: t.answer + e.params.text };
    case 'mira/toolCall':
      return { ...t, tools: [...t.tools, { name: e.params.name, summary: toolChipText(e.params.name, e.params.summary) }] };
    case 'mira/turnFinished': {
      const p = e.params;
      return {
        ...t,
        status: p.status,
        costUsd: p.costUsd ?? undefined,
        tokens: { input: p.usage.inputTokens, cached: p.usage.cachedTokens, output: p.usage.outputTokens },
        error: p.error,
      };
    }
  }
}

export function running(s: ChatState): ChatTurn | undefined {
  return [...s.turns].reverse().find((t) => t.status === 'running');
}

/** "$0.0042 · 1.2k in (1k cached) · 40 out" — what a turn cost. */
export function costLine(t: ChatTurn): string {
  const parts: string[] = [];
  if (t.costUsd !== undefined) parts.push(formatUsd(t.costUsd));
  if (t.tokens) {
    const cached = t.tokens.cached ? ` (${compact(t.tokens.cached)} cached)` : '';
    parts.push(`${compact(t.tokens.input)} in${cached}`, `${compact(t.tokens.output)} out`);
  }
  return parts.join(' · ');
}

export function formatUsd(v: number): string {
  if (v === 0) return '$0';
  return v < 0.01 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;
}

function compact(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k` : String(n);
}
