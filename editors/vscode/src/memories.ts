// The memories tree's model: memories grouped by kind, plus the ones forgotten in this window
// (so they can be restored: `mira/memories` lists active memories only). Pure.

/** A memory as `mira/memories` returns it (Rust `memory::Memory`, plus `score` from a search). */
export interface Memory {
  id: number;
  kind: 'fact' | 'preference' | 'decision' | 'correction';
  body: string;
  scope: string;
  status: 'active' | 'superseded' | 'retracted';
  supersedes?: number | null;
  stale?: boolean;
  /** Where the memory is anchored, when the server reports it. */
  anchors?: { uri: string; range?: unknown; name?: string }[];
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
  if (m.supersedes) parts.push(`corrects #${m.supersedes}`);
  return parts.join(' · ');
}
