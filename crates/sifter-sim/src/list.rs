//! An intrusive doubly linked list over dense object ids, stored in one array.
//!
//! `head` is the newest end, `tail` the oldest; `prev` points towards the head (newer), as in
//! libCacheSim's queues, so scanning from the tail towards the head follows `prev`.

/// Null link.
pub const NIL: u32 = u32::MAX;

/// One slot per object id.
#[derive(Debug, Clone, Copy)]
pub struct Node<T> {
    /// Towards the head (newer).
    pub prev: u32,
    /// Towards the tail (older).
    pub next: u32,
    /// Policy data.
    pub data: T,
}

/// The list. A node is linked iff it is `head`, or has a non-NIL `prev`; policies track
/// membership in their own data.
#[derive(Debug, Clone)]
pub struct DList<T> {
    /// Slots indexed by id.
    pub nodes: Vec<Node<T>>,
    /// Newest, or NIL.
    pub head: u32,
    /// Oldest, or NIL.
    pub tail: u32,
    /// Linked nodes.
    pub len: usize,
}

impl<T: Copy + Default> DList<T> {
    /// A list able to hold ids `0..n`.
    pub fn new(n: u32) -> Self {
        DList {
            nodes: vec![Node { prev: NIL, next: NIL, data: T::default() }; n as usize],
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }

    /// Links `id` at the head.
    #[inline]
    pub fn push_head(&mut self, id: u32) {
        let old = self.head;
        {
            let n = &mut self.nodes[id as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old != NIL {
            self.nodes[old as usize].prev = id;
        } else {
            self.tail = id;
        }
        self.head = id;
        self.len += 1;
    }

    /// Unlinks `id` (which must be linked).
    #[inline]
    pub fn unlink(&mut self, id: u32) {
        let Node { prev, next, .. } = self.nodes[id as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
        let n = &mut self.nodes[id as usize];
        n.prev = NIL;
        n.next = NIL;
        self.len -= 1;
    }

    /// Moves a linked `id` to the head.
    #[inline]
    pub fn move_to_head(&mut self, id: u32) {
        if self.head != id {
            self.unlink(id);
            self.push_head(id);
        }
    }

    /// Ids from head (newest) to tail (for validation and tests).
    pub fn ids(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len);
        let mut c = self.head;
        while c != NIL && out.len() <= self.len {
            out.push(c);
            c = self.nodes[c as usize].next;
        }
        out
    }

    /// Checks the links agree in both directions and with `len`.
    pub fn validate(&self) -> Result<(), String> {
        let ids = self.ids();
        if ids.len() != self.len {
            return Err(format!("list walks {} nodes but len is {}", ids.len(), self.len));
        }
        let mut prev = NIL;
        for &id in &ids {
            if self.nodes[id as usize].prev != prev {
                return Err(format!("node {id}: prev link broken"));
            }
            prev = id;
        }
        if self.tail != prev {
            return Err("tail is not the last node".into());
        }
        Ok(())
    }
}
