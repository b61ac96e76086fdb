//! An open document's syntax tree and symbols, kept current edit by edit.
//!
//! Per edit: `tree.edit` + incremental reparse, then only the top-level items touched by
//! the edit or by the tree's changed ranges are walked again; every other symbol is shifted
//! by the edit's delta. A full re-walk is the fallback for multi-edit changes. A reparse
//! that runs over its budget is finished in the background ([`background`]), and so is a
//! re-walk too large for a keystroke.

mod background;
mod combine;
mod deadline;

pub use background::{JobId, ParseBudget, ParseJob, Parsed};

use super::extract::{Enclosing, extract, extract_items_in, shallow_symbols};
use super::language::{Cx, Nav, Visit};
use super::model::{FileSymbols, Span};
use super::parse::with_parser;
use super::registry::Lang;
use crate::documents::TextEdit;
use combine::combine;
use deadline::parse_by;
use ropey::Rope;
use std::collections::HashMap;
use std::sync::Arc;
use tree_sitter::{InputEdit, Node, Point, Tree};

/// Top-level regions smaller than this are simply walked again.
const NARROW_ABOVE: usize = 16 * 1024;

/// A re-walk larger than this (~3 ms) does not run on a keystroke when a parse budget is
/// set: the document answers as when its parse ran over, and the background job walks.
/// It happens when error recovery nests the rest of a bundle in the function being typed.
const DEFER_WALK_ABOVE: usize = 48 * 1024;

#[derive(Clone, Copy)]
enum Placed {
    Before(u32),
    Gone,
    After(u32),
}

pub struct OpenDoc {
    pub lang: Lang,
    pub version: i32,
    pub rope: Rope,
    text: Arc<Vec<u8>>,
    tree: Tree,
    pub symbols: FileSymbols,
    budget: ParseBudget,
    /// Set while the tree is behind the text (a reparse ran out of budget).
    pending: Option<Pending>,
    /// The last background parse took longer than the budget: keystrokes do not try
    /// until one is quicker. In effect's `stream.ts` every reparse redoes its error
    /// recovery (3 ms at best, wherever the edit is), so each try would only hold up the
    /// keystroke and the requests behind it.
    reparse_slow: bool,
}

/// How an update was done (for tests and the benchmark).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKind {
    /// Only the top-level items in this byte range of the new text were walked again.
    Spliced {
        walked_bytes: usize,
    },
    Full,
    /// The reparse ran out of budget: the symbols were shifted by the edit and the parse
    /// is pending ([`OpenDoc::parse_job`]).
    Pending,
}

fn rope_bytes(rope: &Rope) -> Vec<u8> {
    let mut v = Vec::with_capacity(rope.len_bytes());
    for chunk in rope.chunks() {
        v.extend_from_slice(chunk.as_bytes());
    }
    v
}

fn parse(lang: Lang, text: &[u8], old: Option<&Tree>) -> Option<Tree> {
    with_parser(lang, |p| {
        if old.is_none() {
            p.reset();
        }
        p.parse(text, old)
    })
}

fn input_edit(e: &TextEdit) -> InputEdit {
    InputEdit {
        start_byte: e.start_byte,
        old_end_byte: e.old_end_byte,
        new_end_byte: e.new_end_byte,
        start_position: Point::new(e.start_point.row, e.start_point.column),
        old_end_position: Point::new(e.old_end_point.row, e.old_end_point.column),
        new_end_position: Point::new(e.new_end_point.row, e.new_end_point.column),
    }
}

/// The byte span (new coordinates) of the new root's children that did not come through
/// the edit unchanged, together with the edit itself. A child counts as unchanged when the
/// old (already edited) root had a child of the same kind over the same bytes that the edit
/// did not touch, and neither holds a parse error: the same error-free text parsed as the
/// same kind is the same subtree, so its symbols are the old ones shifted. (Subtree ids are
/// no help: tree-sitter stores small nodes such as comments inline and re-creates them.)
/// Extraction reads nothing above a root child but its preceding siblings, which the
/// caller's doc rule covers. `None` when a root has no children.
fn not_reused(old: &Tree, new: &Tree, e: &TextEdit) -> Option<(usize, usize)> {
    type Key = (u16, usize, usize);
    fn keys(root: Node<'_>, keep: impl Fn(&Node<'_>) -> bool) -> Vec<(Key, bool)> {
        let mut cursor = root.walk();
        root.children(&mut cursor)
            .map(|c| ((c.kind_id(), c.start_byte(), c.end_byte()), keep(&c)))
            .collect()
    }
    let (old_root, new_root) = (old.root_node(), new.root_node());
    if old_root.child_count() == 0 || new_root.child_count() == 0 {
        return None;
    }
    let old_keys = keys(old_root, |c| !c.has_changes() && !c.has_error());
    let new_keys = keys(new_root, |c| !c.has_error());
    let keepable = |keys: &[(Key, bool)]| -> std::collections::HashSet<Key> {
        keys.iter().filter(|(_, ok)| *ok).map(|(k, _)| *k).collect()
    };
    let (in_old, in_new) = (keepable(&old_keys), keepable(&new_keys));
    let (mut lo, mut hi) = (e.start_byte, e.new_end_byte);
    // A new child that is not an old one, and an old child that is gone (its text now
    // belongs to a comment or an error that swallowed it): both are what changed.
    let changed = new_keys
        .iter()
        .filter(|(k, ok)| !(*ok && in_old.contains(k)))
        .chain(
            old_keys
                .iter()
                .filter(|(k, ok)| !(*ok && in_new.contains(k))),
        );
    for ((_, start, end), _) in changed {
        lo = lo.min(*start);
        hi = hi.max(*end);
    }
    Some((lo, hi))
}

/// Whether `tree` (the old tree, edited into new coordinates) has an ERROR node over exactly
/// `start..end`.
fn had_error_over(tree: &Tree, start: usize, end: usize) -> bool {
    let mut n = tree.root_node().descendant_for_byte_range(start, end);
    while let Some(x) = n {
        if x.start_byte() != start || x.end_byte() != end {
            return false;
        }
        if x.is_error() {
            return true;
        }
        n = x.parent();
    }
    false
}

/// How much of the text lies in top-level items that hold a parse error.
fn bytes_in_error(tree: &Tree) -> usize {
    let root = tree.root_node();
    let mut cursor = root.walk();
    root.children(&mut cursor)
        .filter(|c| c.has_error())
        .map(|c| c.end_byte() - c.start_byte())
        .sum()
}

fn root_items(tree: &Tree) -> Vec<(usize, usize)> {
    let root = tree.root_node();
    let mut cursor = root.walk();
    root.children(&mut cursor)
        .map(|c| (c.start_byte(), c.end_byte()))
        .collect()
}

impl OpenDoc {
    pub fn open(lang: Lang, version: i32, rope: Rope) -> Option<OpenDoc> {
        let text = Arc::new(rope_bytes(&rope));
        let tree = parse(lang, &text, None)?;
        let symbols = extract(lang, &tree, &text);
        Some(OpenDoc {
            lang,
            version,
            rope,
            text,
            tree,
            symbols,
            budget: ParseBudget::Wait,
            pending: None,
            reparse_slow: false,
        })
    }

    /// How long each edit's reparse may take before it is finished in the background
    /// (see [`background`]); a new document always waits.
    pub fn set_parse_budget(&mut self, budget: ParseBudget) {
        self.budget = budget;
    }

    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// The syntax tree: while a parse is pending, the last finished one, edited.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// A reparse ran out of budget and has not been caught up with yet: the symbols are
    /// the last exact ones, shifted by the edits since.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Applies one didChange (its edits in order) whose result is `rope`.
    pub fn apply(&mut self, version: i32, edits: &[TextEdit], rope: Rope) -> UpdateKind {
        self.version = version;
        self.rope = rope;
        self.text = Arc::new(rope_bytes(&self.rope));
        for e in edits {
            self.tree.edit(&input_edit(e));
        }
        let change = edits.iter().copied().reduce(|a, b| combine(&a, &b));
        if let (Some(p), Some(c)) = (&mut self.pending, change) {
            p.since = combine(&p.since, &c);
            if let Some(job) = &mut p.job {
                job.since = Some(job.since.map_or(c, |j| combine(&j, &c)));
            }
        }
        let parsed = match self.retry_budget() {
            Some(budget) => {
                let parsed = parse_by(self.lang, &self.text, &self.tree, budget);
                if let (None, Some(p)) = (&parsed, &mut self.pending) {
                    p.retried = p.job.is_some();
                }
                parsed
            }
            None => None,
        };
        match parsed {
            Some(new_tree) => match self.pending.take() {
                // Caught up: splice against the last exact symbols with every edit since.
                Some(p) => {
                    self.symbols = Arc::unwrap_or_clone(p.exact);
                    self.install_tree(new_tree, &p.since, p.job)
                }
                None => match edits {
                    [single] => self.install_tree(new_tree, single, None),
                    _ => {
                        self.symbols = extract(self.lang, &new_tree, &self.text);
                        self.tree = new_tree;
                        UpdateKind::Full
                    }
                },
            },
            None if self.budget == ParseBudget::Wait => self.reparse_fully(),
            None => self.defer(change),
        }
    }

    /// While a background parse is in flight, a keystroke only tries briefly, and only
    /// once until the job lands: the text is usually still as costly to parse (an opened
    /// string, or an edit that touches a large item's end), and the job will catch up;
    /// what succeeds in the shorter time is the cheap case (the string closed again).
    /// A failed try is not cheap: tree-sitter checks its deadline every 100 operations,
    /// and in error recovery those can take 3–4 ms past it. `None`: do not try.
    fn retry_budget(&self) -> Option<ParseBudget> {
        match (self.budget, &self.pending) {
            (ParseBudget::Within(_), _) if self.reparse_slow => None,
            (ParseBudget::Within(_), Some(p)) if p.retried => None,
            (ParseBudget::Within(d), Some(p)) if p.job.is_some() => {
                Some(ParseBudget::Within(d / 3))
            }
            (budget, _) => Some(budget),
        }
    }

    /// `self.tree` is the old tree edited by `e`, `self.symbols` its symbols; `new` is
    /// the tree of the current text. `job` is a background parse still in flight.
    fn install_tree(&mut self, new: Tree, e: &TextEdit, job: Option<InFlight>) -> UpdateKind {
        let may_defer = self.budget != ParseBudget::Wait;
        let base = Base {
            lang: self.lang,
            text: &self.text,
            tree: &self.tree,
            symbols: std::mem::take(&mut self.symbols),
        };
        match base.splice(&new, e, may_defer) {
            Ok((symbols, kind)) => {
                self.symbols = symbols;
                self.tree = new;
                kind
            }
            Err(exact) => {
                // The walk is the background job's: keep the edited old tree (what the
                // exact symbols and `e` are relative to) and answer shifted.
                self.symbols = rebuild(exact.clone(), e, (0, 0), |_| FileSymbols::default());
                self.pending = Some(Pending {
                    exact: Arc::new(exact),
                    since: *e,
                    job,
                    retried: false,
                });
                UpdateKind::Pending
            }
        }
    }

    /// The reparse ran out of budget: keep the edited tree, answer with the symbols shifted
    /// by the edit, and remember what a finished parse must be spliced against.
    fn defer(&mut self, change: Option<TextEdit>) -> UpdateKind {
        let Some(change) = change else {
            // Nothing was edited, so the old tree is the text's.
            return UpdateKind::Spliced { walked_bytes: 0 };
        };
        if self.pending.is_none() {
            self.pending = Some(Pending {
                exact: Arc::new(self.symbols.clone()),
                since: change,
                job: None,
                retried: false,
            });
        }
        let old = std::mem::take(&mut self.symbols);
        self.symbols = rebuild(old, &change, (0, 0), |_| FileSymbols::default());
        UpdateKind::Pending
    }

    /// The background parse this document needs, when one is pending and none is in
    /// flight (at most one per document: later edits are replayed on its result).
    pub fn parse_job(&mut self) -> Option<ParseJob> {
        let p = self.pending.as_mut().filter(|p| p.job.is_none())?;
        let job = ParseJob::new(
            self.lang,
            self.version,
            self.text.clone(),
            self.tree.clone(),
            Arc::clone(&p.exact),
            p.since,
        );
        p.job = Some(InFlight {
            id: job.id,
            since: None,
        });
        Some(job)
    }

    /// Takes a finished background parse: replays the edits made since its snapshot and
    /// reparses within the budget. `None` when it is stale (the document was parsed in
    /// time since, or this is another document's); `Some(Pending)` when the catch-up ran
    /// out of budget too (a new [`OpenDoc::parse_job`] is then due).
    pub fn install(&mut self, parsed: Parsed) -> Option<UpdateKind> {
        let p = self.pending.as_mut()?;
        let job = p.job.take_if(|j| j.id == parsed.id)?;
        p.retried = false;
        self.reparse_slow = matches!(self.budget, ParseBudget::Within(d) if parsed.parsed_in > d);
        let Some(mut tree) = parsed.tree else {
            return Some(UpdateKind::Pending);
        };
        let Some(since) = job.since else {
            self.pending = None;
            self.tree = tree;
            self.symbols = parsed.symbols;
            return Some(UpdateKind::Full);
        };
        tree.edit(&input_edit(&since));
        // The job's tree becomes the base of the next parses (this catch-up, the
        // keystrokes' retries and the next job) unless more of it is in error than the
        // current base: tree-sitter reuses nothing built by error recovery, so from a tree
        // parsed while a `"""` swallowed the rest of the file, closing it again costs a full
        // reparse, while from the tree before it opened it costs the edit.
        let from_job = bytes_in_error(&tree) <= bytes_in_error(&self.tree);
        if from_job {
            p.exact = Arc::new(parsed.symbols);
            p.since = since;
            self.tree = tree;
        }
        // The actor answers the editor: catching up here only gets the short retry budget,
        // and a text that is still costly to parse goes back to the background. A job
        // whose own parse took longer than that says so before trying: in effect's
        // `stream.ts` every reparse redoes its error recovery (3 ms wherever the edit is),
        // and a futile try would hold each request behind an install. The keystrokes then
        // wait for the next job too.
        let budget = match self.budget {
            ParseBudget::Within(d) => ParseBudget::Within(d / 3),
            wait => wait,
        };
        if let ParseBudget::Within(d) = budget
            && from_job
            && parsed.parsed_in > d
        {
            p.retried = true;
            return Some(UpdateKind::Pending);
        }
        let Some(new_tree) = parse_by(self.lang, &self.text, &self.tree, budget) else {
            return Some(UpdateKind::Pending);
        };
        let p = self.pending.take()?;
        self.symbols = Arc::unwrap_or_clone(p.exact);
        Some(self.install_tree(new_tree, &p.since, None))
    }

    fn reparse_fully(&mut self) -> UpdateKind {
        if let Some(tree) = parse(self.lang, &self.text, None) {
            self.symbols = extract(self.lang, &tree, &self.text);
            self.tree = tree;
        }
        UpdateKind::Full
    }
}

/// What a splice starts from: the old tree edited to match `text`, and its exact symbols.
/// The owner splices on a keystroke; a background parse splices the same way off-thread.
pub(super) struct Base<'a> {
    pub lang: Lang,
    pub text: &'a [u8],
    pub tree: &'a Tree,
    pub symbols: FileSymbols,
}

impl Base<'_> {
    /// `new` is the tree of `text`; `e` every edit since `tree`'s own text, as one. The
    /// symbols of `new`, and how they were made; the old ones back, untouched, when
    /// `may_defer` and the walk would be over [`DEFER_WALK_ABOVE`].
    pub fn splice(
        self,
        new: &Tree,
        e: &TextEdit,
        may_defer: bool,
    ) -> Result<(FileSymbols, UpdateKind), FileSymbols> {
        let (r_lo, r_hi) = self.changed(new, e);
        let mut region = self.grow(new, e, (r_lo, r_hi), false);
        // The item after the region keeps its symbols; only those anchored at it may read
        // a new doc from the comments above it (a bundle's wrapper holds the whole library).
        let mut next_docs = Vec::new();
        if let Some(next) = region.next {
            match self.anchored_docs(next, e) {
                Some(docs) => next_docs = docs,
                None => region = self.grow(new, e, (r_lo, r_hi), true),
            }
        }
        let (lo, hi) = (region.lo, region.hi);

        // Inside one big top-level item (a class spanning the file, a UMD bundle), re-walk
        // only the touched members of the innermost enclosing body.
        let root = new.root_node();
        let (lo, hi, parent, items, enclosing, docs) = match (hi - lo > NARROW_ABOVE)
            .then(|| self.narrow(new, r_lo, r_hi, e))
            .flatten()
        {
            Some(n) => (n.lo, n.hi, n.parent, n.items, n.enclosing, n.docs),
            None => {
                let mut cursor = root.walk();
                let items: Vec<Node> = root
                    .children(&mut cursor)
                    .filter(|c| c.start_byte() >= lo && c.end_byte() <= hi)
                    .collect();
                (lo, hi, root, items, Vec::new(), Vec::new())
            }
        };
        if may_defer && hi - lo > DEFER_WALK_ABOVE {
            return Err(self.symbols);
        }

        let mut old = self.symbols;
        for (index, doc) in next_docs {
            old.symbols[index as usize].doc = doc;
        }
        let (lang, text) = (self.lang, self.text);
        let mut symbols = rebuild(old, e, (lo, hi), |n_before| {
            extract_items_in(lang, text, parent, items, enclosing, n_before)
        });
        // An enclosing definition keeps its entry, but its doc may be read from inside its
        // body (a Python docstring is the body's first statement): take the doc read now.
        for (index, doc) in docs {
            if let Some(s) = symbols.symbols.get_mut(index as usize) {
                s.doc = doc;
            }
        }
        Ok((
            symbols,
            UpdateKind::Spliced {
                walked_bytes: hi - lo,
            },
        ))
    }

    /// The byte span (new coordinates) that may hold different symbols now.
    fn changed(&self, new: &Tree, e: &TextEdit) -> (usize, usize) {
        let mut lo = e.start_byte;
        let mut hi = e.new_end_byte;
        for r in self.tree.changed_ranges(new) {
            lo = lo.min(r.start_byte);
            hi = hi.max(r.end_byte);
        }
        if hi - lo > NARROW_ABOVE {
            // An unclosed `{` or string turns the root into an ERROR node whose children
            // are the same items as before: tree-sitter then reports the whole file as
            // changed. What really changed are the root's children it did not reuse.
            if let Some((a, b)) = not_reused(self.tree, new, e)
                && b - a < hi - lo
            {
                (lo, hi) = (a, b);
            }
        }
        (lo, hi)
    }

    /// Grows `changed` to whole top-level items of both trees until stable, so no symbol
    /// is half inside, plus the comments after it. A definition's doc is read from the
    /// comments and attributes above it, so the first item after those may have a new doc:
    /// with `walk_next` it is walked too, else it is left out and returned as `next` (an
    /// edit that changed it shows in the changed ranges, which then cover it).
    fn grow<'t>(
        &self,
        new: &'t Tree,
        e: &TextEdit,
        (mut lo, mut hi): (usize, usize),
        walk_next: bool,
    ) -> Region<'t> {
        let old_items = root_items(self.tree);
        let new_items = root_items(new);
        let root = new.root_node();
        let mut cursor = root.walk();
        let children: Vec<Node> = root.children(&mut cursor).collect();
        let spec = self.lang.spec();
        let doc_kinds =
            |k: &str| spec.comment_kinds().contains(&k) || spec.doc_transparent().contains(&k);
        let mut extended = false;
        let mut next: Option<Node<'t>> = None;
        loop {
            let (mut nlo, mut nhi) = (lo, hi);
            for &(s, en) in old_items.iter().chain(&new_items) {
                // An item starting where the region ends, over the same bytes in both
                // trees, outside the changed ranges and past the replaced text (a token
                // whose text changed is not a change of structure), is the same as
                // before: unless it is to be walked, it is the next item.
                let after = !walk_next
                    && s == nhi
                    && en > s
                    && (s > e.new_end_byte
                        || (s == e.new_end_byte && e.old_end_byte == e.start_byte))
                    && old_items.binary_search(&(s, en)).is_ok()
                    && new_items.binary_search(&(s, en)).is_ok();
                if s <= nhi && en >= nlo && !after {
                    nlo = nlo.min(s);
                    nhi = nhi.max(en);
                }
            }
            let first_after = children.iter().position(|c| c.start_byte() >= nhi);
            if let (false, Some(first_after)) = (extended, first_after) {
                extended = true;
                for c in &children[first_after..] {
                    if doc_kinds(c.kind()) {
                        nhi = nhi.max(c.end_byte());
                        continue;
                    }
                    if walk_next {
                        nhi = nhi.max(c.end_byte());
                    } else {
                        next = Some(*c);
                    }
                    break;
                }
            }
            if (nlo, nhi) == (lo, hi) {
                break;
            }
            (lo, hi) = (nlo, nhi);
        }
        Region {
            lo,
            hi,
            next: next.filter(|n| n.start_byte() >= hi),
        }
    }

    /// The docs of the old symbols defined near the top of `next` (an item after the
    /// region, the same in both trees), read in the new tree: (index in the old list,
    /// doc). `None` when some definition there has no one old counterpart.
    fn anchored_docs(&self, next: Node<'_>, e: &TextEdit) -> Option<Vec<(u32, Option<String>)>> {
        let delta = e.new_end_byte as i64 - e.old_end_byte as i64;
        let old_start = (next.start_byte() as i64 - delta) as u32;
        let old_end = (next.end_byte() as i64 - delta) as u32;
        let mut at: HashMap<u32, Vec<u32>> = HashMap::new();
        for (i, s) in self.symbols.symbols.iter().enumerate() {
            if s.range.start_byte >= old_start && s.range.end_byte <= old_end {
                at.entry(s.selection.start_byte).or_default().push(i as u32);
            }
        }
        let mut docs = Vec::new();
        for s in shallow_symbols(self.lang, self.text, next) {
            let old_at = (s.selection.start_byte as i64 - delta) as u32;
            let mut same = at.get(&old_at)?.iter().filter(|&&i| {
                let o = &self.symbols.symbols[i as usize];
                o.kind == s.kind && o.name == s.name
            });
            let (Some(&index), None) = (same.next(), same.next()) else {
                return None;
            };
            if self.symbols.symbols[index as usize].doc != s.doc {
                docs.push((index, s.doc));
            }
        }
        Some(docs)
    }

    /// The members of the innermost body strictly enclosing `[r_lo, r_hi]`, with the
    /// definitions around them; `None` when the edit is not safely inside one body.
    fn narrow<'t>(
        &self,
        new: &'t Tree,
        r_lo: usize,
        r_hi: usize,
        e: &TextEdit,
    ) -> Option<Narrowed<'t>> {
        let spec = self.lang.spec();
        let actions = &self.lang.tables().actions;
        let mut node = new.root_node();
        let mut enclosing: Vec<Enclosing> = Vec::new();
        let mut docs = Vec::new();
        loop {
            let mut cursor = node.walk();
            let next = node
                .named_children(&mut cursor)
                .find(|c| c.start_byte() < r_lo && r_hi < c.end_byte());
            let Some(c) = next else { break };
            // An ERROR node the edit made (error recovery regrouped the text around it) may
            // hold definitions outside the changed ranges whose doc it now anchors: stop at it,
            // so all its children are walked (below).
            if c.is_error() && !had_error_over(self.tree, c.start_byte(), c.end_byte()) {
                node = c;
                break;
            }
            // Comments and strings are leaves here: the item list is around them.
            if spec.comment_kinds().contains(&c.kind())
                || actions.get(c.kind_id() as usize) == Some(&super::registry::KindAction::Skip)
            {
                break;
            }
            if actions.get(c.kind_id() as usize) != Some(&super::registry::KindAction::Classify) {
                node = c;
                continue;
            }
            let cx = Cx {
                src: self.text,
                parent: enclosing.last().map(|o| o.kind),
                nav: Nav::none(),
            };
            match spec.classify(c, &cx) {
                Visit::Descend => node = c,
                // A reference whose name the edit touches is walked again whole.
                Visit::Ref(r) if r.node.start_byte() <= r_hi && r.node.end_byte() >= r_lo => break,
                Visit::Ref(_) => node = c,
                Visit::Def(def) => {
                    node = c;
                    // Only edits inside the body leave the definition itself unchanged.
                    if def.body.is_none_or(|b| b.start_byte() > r_lo) {
                        return None;
                    }
                    let name_at = def.name.start_byte() as u32;
                    let (index, old) =
                        self.symbols.symbols.iter().enumerate().find(|(_, s)| {
                            s.selection.start_byte == name_at && s.kind == def.kind
                        })?;
                    // Its extent must have moved by exactly the edit: otherwise the parse around
                    // it changed (error recovery) and only a wider walk is right.
                    let delta = e.new_end_byte as i64 - e.old_end_byte as i64;
                    if def.node.start_byte() != old.range.start_byte as usize
                        || def.node.end_byte() as i64 != old.range.end_byte as i64 + delta
                    {
                        return None;
                    }
                    // And its head must read the same (an edit may have moved the body's start).
                    let sig_from = def.sig_start.unwrap_or(def.node).start_byte();
                    let sig_to = def.body.map_or(def.node.end_byte(), |b| b.start_byte());
                    if super::extract::signature(&self.text[sig_from..sig_to.max(sig_from)])
                        != old.signature
                    {
                        return None;
                    }
                    // Its doc may come from inside the body (a docstring): re-read it.
                    let doc = super::extract::doc(self.lang, &def, self.text, Nav::none());
                    if doc != old.doc {
                        docs.push((index as u32, doc));
                    }
                    let own = def.qual.clone().unwrap_or_else(|| old.name.clone());
                    let child_container = match &old.container {
                        Some(c) => format!("{c}{}{own}", spec.separator()),
                        None => own,
                    };
                    enclosing.push(Enclosing {
                        index: index as u32,
                        kind: def.kind,
                        child_container,
                    });
                }
                Visit::Defs(_) | Visit::Imports(_) | Visit::Skip => return None,
            }
        }
        // Inside an anonymous function (a bundle's factory) there is no enclosing definition,
        // but the body's members are still the only items the edit can change.
        if node == new.root_node() {
            return None;
        }
        // Every old definition around the edit must be one of those found.
        let around = self
            .symbols
            .symbols
            .iter()
            .filter(|s| {
                (s.range.start_byte as usize) < e.start_byte
                    && s.range.end_byte as usize > e.old_end_byte
            })
            .count();
        if around != enclosing.len() {
            return None;
        }
        let mut cursor = node.walk();
        let kids: Vec<Node> = node.children(&mut cursor).collect();
        // Error recovery regroups the nodes around an edit without reporting them changed,
        // and a definition inside an ERROR node takes its doc from the comment above that
        // node: any of its children may now read another one, so walk them all.
        let (mut lo, mut hi) = if node.is_error() {
            (r_lo.min(node.start_byte()), r_hi.max(node.end_byte()))
        } else {
            (r_lo, r_hi)
        };
        for k in &kids {
            if k.start_byte() <= hi && k.end_byte() >= lo {
                lo = lo.min(k.start_byte());
                hi = hi.max(k.end_byte());
            }
        }
        let doc_kinds =
            |k: &str| spec.comment_kinds().contains(&k) || spec.doc_transparent().contains(&k);
        if let Some(first_after) = kids.iter().position(|c| c.start_byte() >= hi) {
            for c in &kids[first_after..] {
                hi = hi.max(c.end_byte());
                if !doc_kinds(c.kind()) {
                    break;
                }
            }
        }
        let items = kids
            .into_iter()
            .filter(|c| c.start_byte() >= lo && c.end_byte() <= hi)
            .collect();
        Some(Narrowed {
            lo,
            hi,
            parent: node,
            items,
            enclosing,
            docs,
        })
    }
}

/// What [`OpenDoc::narrow`] found: the byte region to walk again, its items, the definitions
/// around them, and those definitions whose doc now reads differently.
struct Narrowed<'t> {
    lo: usize,
    hi: usize,
    /// The node whose consecutive children `items` are.
    parent: Node<'t>,
    items: Vec<Node<'t>>,
    enclosing: Vec<Enclosing>,
    /// (index in the symbol list, doc read now).
    docs: Vec<(u32, Option<String>)>,
}

/// The top-level span to walk again and, when it was left out, the item after it.
struct Region<'t> {
    lo: usize,
    hi: usize,
    next: Option<Node<'t>>,
}

/// What a document whose reparse ran out of budget keeps.
struct Pending {
    /// The symbols of the last finished parse, and every edit since as one: what the
    /// parse that catches up is spliced against. Shared with the job in flight, which
    /// copies them on its own thread (thousands of references: a millisecond a copy).
    exact: Arc<FileSymbols>,
    since: TextEdit,
    job: Option<InFlight>,
    /// A keystroke's reparse ran out while `job` was in flight, or the last job said a
    /// catch-up would: keystrokes do not try again until the job lands.
    retried: bool,
}

/// The background parse of a pending document.
struct InFlight {
    id: JobId,
    /// Every edit since its snapshot, as one.
    since: Option<TextEdit>,
}

/// The symbols after `e`: those before `lo` stay, those in `lo..hi` (new coordinates) or
/// starting in the replaced text go, those after shift; `fresh(n)` gives the symbols of
/// `lo..hi` numbered from `n`, the count kept before them.
fn rebuild(
    old: FileSymbols,
    e: &TextEdit,
    (lo, hi): (usize, usize),
    fresh: impl FnOnce(u32) -> FileSymbols,
) -> FileSymbols {
    let ie = input_edit(e);
    let shifted = |span: &Span| -> Span {
        let mut s = *span;
        if s.start_byte as usize >= e.old_end_byte {
            s.shift(&ie);
        } else if s.end_byte as usize > e.start_byte && s.end_byte as usize >= e.old_end_byte {
            // An enclosing definition: it grows or shrinks with the edit.
            s.shift_end(&ie);
        } else if s.end_byte as usize > e.start_byte {
            // It ended in the replaced text (kept only while a parse is pending).
            s.end_byte = e.new_end_byte as u32;
            s.end = ie.new_end_position.into();
        }
        s
    };
    // `orig` is the start before the edit: anything starting inside the replaced text
    // is gone whatever its stale offsets say.
    let place = |orig: usize, start: usize| -> u8 {
        if (e.start_byte..e.old_end_byte).contains(&orig) || (lo <= start && start < hi) {
            1
        } else if start < lo {
            0
        } else {
            2
        }
    };
    // Where each old symbol ends up, so parent and caller indices can follow it.
    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut placed: Vec<Placed> = Vec::with_capacity(old.symbols.len());
    for mut s in old.symbols {
        let orig = s.range.start_byte as usize;
        s.range = shifted(&s.range);
        s.selection = shifted(&s.selection);
        match place(orig, s.range.start_byte as usize) {
            0 => {
                placed.push(Placed::Before(before.len() as u32));
                before.push(s);
            }
            1 => placed.push(Placed::Gone),
            _ => {
                placed.push(Placed::After(after.len() as u32));
                after.push(s);
            }
        }
    }
    let n_before = before.len() as u32;
    let fresh = fresh(n_before);
    let n_fresh = fresh.symbols.len() as u32;
    let final_index = |old_index: u32| -> Option<u32> {
        match placed.get(old_index as usize)? {
            Placed::Before(i) => Some(*i),
            Placed::After(i) => Some(n_before + n_fresh + i),
            Placed::Gone => None,
        }
    };
    let mut symbols = before;
    symbols.extend(fresh.symbols);
    for mut s in after {
        s.parent = s.parent.and_then(final_index);
        symbols.push(s);
    }

    let mut refs_before = Vec::new();
    let mut refs_after = Vec::new();
    for mut r in old.refs {
        let orig = r.span.start_byte as usize;
        r.span = shifted(&r.span);
        match place(orig, r.span.start_byte as usize) {
            0 => refs_before.push(r),
            1 => {}
            _ => {
                r.caller = r.caller.and_then(final_index);
                refs_after.push(r);
            }
        }
    }
    refs_before.extend(fresh.refs);
    refs_before.extend(refs_after);
    FileSymbols {
        symbols,
        refs: refs_before,
    }
}
