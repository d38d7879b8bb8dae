//! Several intrusive doubly linked lists over the same dense ids: one `Links` array holds every
//! id's neighbours; each list is just its `Ends`. An id is on at most one list at a time.
//! `front` and `back` are positions only; each policy says which end is new.

/// Null link.
pub const NIL: u32 = u32::MAX;

/// The two ends of one list, its length and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Ends {
    /// First id, or NIL.
    pub front: u32,
    /// Last id, or NIL.
    pub back: u32,
    /// Ids on the list.
    pub len: usize,
    /// Sum of the sizes recorded with `push_*`.
    pub bytes: u64,
}

impl Default for Ends {
    fn default() -> Self {
        Ends { front: NIL, back: NIL, len: 0, bytes: 0 }
    }
}

/// Neighbour links of every id.
#[derive(Debug, Clone)]
pub struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

impl Links {
    /// Links for ids `0..n`.
    pub fn new(n: u32) -> Self {
        Links { prev: vec![NIL; n as usize], next: vec![NIL; n as usize] }
    }

    /// The id after `id` (towards the back).
    #[inline]
    pub fn next(&self, id: u32) -> u32 {
        self.next[id as usize]
    }

    /// The id before `id` (towards the front).
    #[inline]
    pub fn prev(&self, id: u32) -> u32 {
        self.prev[id as usize]
    }

    /// Puts `id` at the front of `e`, counting `size` bytes.
    #[inline]
    pub fn push_front(&mut self, e: &mut Ends, id: u32, size: u64) {
        self.prev[id as usize] = NIL;
        self.next[id as usize] = e.front;
        if e.front != NIL {
            self.prev[e.front as usize] = id;
        } else {
            e.back = id;
        }
        e.front = id;
        e.len += 1;
        e.bytes += size;
    }

    /// Puts `id` at the back of `e`, counting `size` bytes.
    #[inline]
    pub fn push_back(&mut self, e: &mut Ends, id: u32, size: u64) {
        self.next[id as usize] = NIL;
        self.prev[id as usize] = e.back;
        if e.back != NIL {
            self.next[e.back as usize] = id;
        } else {
            e.front = id;
        }
        e.back = id;
        e.len += 1;
        e.bytes += size;
    }

    /// Takes `id` (which is on `e`) off the list, uncounting `size` bytes.
    #[inline]
    pub fn unlink(&mut self, e: &mut Ends, id: u32, size: u64) {
        let (p, n) = (self.prev[id as usize], self.next[id as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            e.front = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            e.back = p;
        }
        self.prev[id as usize] = NIL;
        self.next[id as usize] = NIL;
        e.len -= 1;
        e.bytes -= size;
    }

    /// Ids from front to back (validation).
    pub fn ids(&self, e: &Ends) -> Vec<u32> {
        let mut v = Vec::with_capacity(e.len);
        let mut c = e.front;
        while c != NIL && v.len() <= e.len {
            v.push(c);
            c = self.next[c as usize];
        }
        v
    }
}
