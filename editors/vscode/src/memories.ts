// The memories tree's model: memories grouped by kind, the forgotten ones (restorable: the
// server lists them with `mira/memories {status: "retracted"}`), goals and tasks. Pure.

/** A memory as `mira/memories` returns it (Rust `memory::Memory`, plus `score` from a search). */
export interface Memory {
  id: number;
  kind: 'fact' | 'preference' | 'decision' | 'correction';
  body: string;
  scope: string;
  status: 'active' | 'superseded' | 'retracted';
  supersedes?: number | null;
  stale?: boolean;
  /** The symbols it is anchored to (path relative to the project root), when the server says. */
  anchors?: AnchorState[];
}

export interface AnchorState {
  anchor: { path: string; symbol: string };
  stale_since?: number | null;
  gone?: boolean;
}

/** A goal as `mira/goals` returns it (Rust `memory::goals::Goal`). */
export interface Goal {
  id: number;
  title: string;
  description?: string;
  status: string;
  priority?: string;
  progress: number;
  milestones: { id: number; title: string; done: boolean }[];
}

/** A task as `mira/tasks` returns it (Rust `memory::goals::Task`). */
export interface Task {
  id: number;
  goal_id?: number | null;
  title: string;
  status: 'todo' | 'doing' | 'done' | 'cancelled';
  priority: 'low' | 'normal' | 'high' | 'urgent';
}

/** The tasks of one goal (`undefined`: the tasks that belong to no goal listed). */
export function tasksOf(tasks: Task[], goals: Goal[], goal: number | undefined): Task[] {
  if (goal !== undefined) return tasks.filter((t) => t.goal_id === goal);
  const listed = new Set(goals.map((g) => g.id));
  return tasks.filter((t) => t.goal_id == null || !listed.has(t.goal_id));
}

export function taskDescription(t: Task): string {
  const parts = [`#${t.id}`];
  if (t.status !== 'todo') parts.push(t.status);
  if (t.priority !== 'normal') parts.push(t.priority);
  return parts.join(' · ');
}

export function goalDescription(g: Goal): string {
  const parts = [`#${g.id}`, `${g.progress}%`];
  if (g.status !== 'active') parts.push(g.status);
  return parts.join(' · ');
}

/** "src/lib.rs::add" — where an anchored memory points. */
export function anchorLabel(m: Memory): string | undefined {
  const a = m.anchors?.[0];
  if (!a) return undefined;
  const stale = a.stale_since ? (a.gone ? ' (gone)' : ' (stale)') : '';
  return `${a.anchor.path}::${a.anchor.symbol}${stale}`;
}

/** The last segment of a qualified name (`Store::open` → `open`), to find it in a document. */
export function symbolName(qualified: string): string {
  return qualified.split(/::|\.|#/).filter(Boolean).pop() ?? qualified;
}

export const KINDS: { kind: Memory['kind']; label: string }[] = [
  { kind: 'correction', label: 'Corrections' },
  { kind: 'preference', label: 'Preferences' },
  { kind: 'decision', label: 'Decisions' },
  { kind: 'fact', label: 'Facts' },
];

export interface Group {
  id: string;
  label: string;
  items: Memory[];
}

export function groups(active: Memory[], forgotten: Memory[]): Group[] {
  const out: Group[] = KINDS.map(({ kind, label }) => ({
    id: kind,
    label,
    items: active.filter((m) => m.kind === kind && m.status === 'active'),
  })).filter((g) => g.items.length > 0);
  if (forgotten.length) out.push({ id: 'forgotten', label: 'Forgotten (restorable)', items: forgotten });
  return out;
}

export function memoryLabel(m: Memory): string {
  const flat = m.body.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? flat.slice(0, 79) + '…' : flat;
}

export function memoryDescription(m: Memory): string {
  const parts = [`#${m.id}`, m.scope === 'global' ? 'global' : 'project'];
  if (m.stale) parts.push('stale');
  const anchor = anchorLabel(m);
  if (anchor) parts.push(`@${anchor}`);
  if (m.supersedes) parts.push(`corrects #${m.supersedes}`);
  return parts.join(' · ');
}
