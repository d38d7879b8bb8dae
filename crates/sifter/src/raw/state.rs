//! A slot's state byte (see the life cycle in `raw/slot.rs`) and the hand-over of a removed
//! slot between its queue's holder and the collector of its hollow entry (hollowing). Apart
//! from the arena so that loom can check the hand-over (`loom_api::Hollowing`).

use crate::sync::{AtomicU8, Ordering};

/// Never used, or its contents dropped.
pub(crate) const EMPTY: u8 = 0;
/// In the index and the policy.
pub(crate) const LIVE: u8 = 1;
/// Out of the index, still held by the policy.
pub(crate) const DEAD: u8 = 2;
/// Out of both, awaiting reuse; contents not dropped yet.
pub(crate) const RETIRED: u8 = 3;
/// Filled, not published yet: the insert that owns it turns it LIVE right after its index
/// word is stored (under the home lock). A queue policy may already hold it (the insert
/// gathered it with its allocation); an eviction that takes it puts it back.
pub(crate) const NEW: u8 = 4;
/// DEAD, and its contents dropped (hollowing, see `raw/slot.rs`): the policy still holds it,
/// and whoever takes it from the policy retires it as EMPTY.
pub(crate) const HOLLOW: u8 = 5;
/// DEAD, taken from the policy before its contents were dropped (hollowing): the collector of
/// its hollow entry drops them and retires it.
pub(crate) const TAKEN: u8 = 6;

/// What the holder of a removed slot does with it when the policy lets go of it (see
/// [`let_go`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LetGo {
    /// Retire it now (contents to drop at reuse if RETIRED; none if EMPTY).
    Retire,
    /// Leave it: the collector of its hollow entry retires it once its contents are dropped.
    Hollower,
}

/// The holder's side of hollowing: the policy let go of a removed slot whose `state` is DEAD,
/// HOLLOW, or LIVE (its remover cleared the index word and has not marked it yet). Leaves the
/// state RETIRED (contents to drop at reuse), EMPTY (none left) or TAKEN.
#[inline]
pub(crate) fn let_go(state: &AtomicU8) -> LetGo {
    // Acquire: the remover's unlinking (and, for HOLLOW, the collector's drop) before our
    // retirement of the slot.
    let mut cur = state.load(Ordering::Acquire);
    loop {
        let (to, then) = match cur {
            DEAD => (TAKEN, LetGo::Hollower),
            HOLLOW => (EMPTY, LetGo::Retire),
            // LIVE: the remover's LIVE → DEAD then fails, and it makes no hollow entry.
            _ => {
                debug_assert_eq!(cur, LIVE, "a removed slot let go in state {cur}");
                (RETIRED, LetGo::Retire)
            }
        };
        // AcqRel: Release orders our queue removal before the collector's retirement (TAKEN);
        // Acquire as above.
        match state.compare_exchange(cur, to, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return then,
            Err(now) => cur = now,
        }
    }
}

/// The collector's side of hollowing, after it dropped a DEAD slot's contents: true if the
/// slot is now HOLLOW (the policy's holder retires it), false if its holder let go first
/// (TAKEN: the caller retires it, as EMPTY).
#[inline]
pub(crate) fn hollowed(state: &AtomicU8) -> bool {
    // Release: our drop before the holder's retirement and the slot's reuse. Acquire
    // (failure): the holder's queue removal before our retirement.
    match state.compare_exchange(DEAD, HOLLOW, Ordering::Release, Ordering::Acquire) {
        Ok(_) => true,
        Err(now) => {
            debug_assert_eq!(now, TAKEN, "a hollow entry's slot in state {now}");
            state.store(EMPTY, Ordering::Relaxed);
            false
        }
    }
}
