//! Weighted reciprocal-rank fusion. Pure: ranked id lists in, fused scores out. Shared by
//! memory recall and code search.

use std::collections::HashMap;

/// Fuses ranked lists: `score(id) = Σ weight / (k + rank)`, ranks from 1. Ties keep the order
/// of first appearance (earlier lists, better ranks first), so results are deterministic.
pub fn weighted_rrf(lists: &[(f64, &[i64])], k: f64) -> Vec<(i64, f64)> {
    let mut scores: HashMap<i64, (f64, usize)> = HashMap::new();
    let mut seen = 0usize;
    for (weight, ids) in lists {
        if *weight <= 0.0 {
            continue;
        }
        for (i, id) in ids.iter().enumerate() {
            let entry = scores.entry(*id).or_insert_with(|| {
                seen += 1;
                (0.0, seen)
            });
            entry.0 += weight / (k + (i + 1) as f64);
        }
    }
    let mut out: Vec<(i64, f64, usize)> =
        scores.into_iter().map(|(id, (s, o))| (id, s, o)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    out.into_iter().map(|(id, s, _)| (id, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_beats_a_single_list() {
        let bm25 = [1, 2, 3];
        let vec = [3, 4, 1];
        let fused = weighted_rrf(&[(1.0, &bm25), (1.0, &vec)], 60.0);
        let ids: Vec<i64> = fused.iter().map(|f| f.0).collect();
        assert_eq!(ids, [1, 3, 2, 4]);
    }

    #[test]
    fn weights_shift_the_order_and_zero_disables_a_list() {
        let bm25 = [1, 2];
        let vec = [2, 1];
        let lean_vec = weighted_rrf(&[(0.5, &bm25), (1.0, &vec)], 60.0);
        assert_eq!(lean_vec[0].0, 2);
        let only_bm25 = weighted_rrf(&[(1.0, &bm25), (0.0, &[9])], 60.0);
        assert_eq!(only_bm25.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 2]);
    }
}
