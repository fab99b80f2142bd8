//! A colouring of the block graph of `N` for Gauss-Seidel sweeps in parallel (issue 34): two
//! blocks (contacts) that share a colour are not coupled (`N_cd = N_dc = 0`: on the
//! matrix-free storage, no shared body), so the blocks of one colour can be updated at the
//! same time, each from the values of the colours before it, and a sweep colour after colour
//! is a Gauss-Seidel sweep in the order of the colours (Adams 1982; Siconos' `NSGS` on the
//! interaction graph and mujoco_warp's coloured PGS use the same idea).
//!
//! The colouring is greedy in block order: block `c` takes the smallest colour no coupled
//! block before it has ([`Instance::block_neighbours`]). It depends on the instance only, so
//! a coloured sweep is the same, to the bit, for any number of threads. On a graph of maximal
//! degree `Delta` it uses at most `Delta + 1` colours (a pyramid of spheres: about 12 contacts
//! per sphere).

use crate::instance::Instance;

/// The blocks of an instance grouped by colour: the members of colour `k` are
/// `order[ptr[k]..ptr[k + 1]]`, in increasing block order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Colouring {
    order: Vec<u32>,
    ptr: Vec<usize>,
}

impl Colouring {
    /// The greedy colouring of `inst`'s block graph (module docs). Time: one pass over the
    /// neighbours of every block (on the matrix-free storage, the contacts of every velocity of
    /// each contact); memory: 8 bytes per block while colouring (each block's colour and the
    /// order), 4 kept, and one word per colour. Block numbers are stored as `u32` (more than
    /// `u32::MAX` blocks, some 100 GB of block storage, are not supported).
    pub fn greedy(inst: &Instance) -> Self {
        let nb = inst.n_blocks();
        let mut colour = vec![u32::MAX; nb];
        // forbidden[k] == c: colour k is taken by a neighbour of block c
        let mut forbidden: Vec<usize> = Vec::new();
        let mut nbrs = Vec::new();
        let mut count = vec![0usize; 0];
        for c in 0..nb {
            inst.block_neighbours(c, &mut nbrs);
            for &d in &nbrs {
                let k = colour[d as usize];
                if k != u32::MAX {
                    forbidden[k as usize] = c;
                }
            }
            let k = (0..forbidden.len())
                .find(|&k| forbidden[k] != c)
                .unwrap_or(forbidden.len());
            if k == forbidden.len() {
                forbidden.push(usize::MAX);
                count.push(0);
            }
            colour[c] = k as u32;
            count[k] += 1;
        }
        let mut ptr = vec![0usize; count.len() + 1];
        for (k, &m) in count.iter().enumerate() {
            ptr[k + 1] = ptr[k] + m;
        }
        let mut next = ptr.clone();
        let mut order = vec![0u32; nb];
        for (c, &k) in colour.iter().enumerate() {
            order[next[k as usize]] = c as u32;
            next[k as usize] += 1;
        }
        Self { order, ptr }
    }

    /// Number of colours.
    pub fn colours(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// The blocks of colour `k` (`k < colours()`), in increasing order.
    pub fn members(&self, k: usize) -> &[u32] {
        &self.order[self.ptr[k]..self.ptr[k + 1]]
    }

    /// Every block, colour after colour (colour 0's members, then colour 1's, ...), each
    /// colour in increasing block order: the concatenation of [`Colouring::members`], the row
    /// order of a colour-contiguous copy of `N`
    /// ([`crate::operator::BlockSymMatrix::whole_rows`]). Position `p` of colour `k` is
    /// `offset(k) + i` for its `i`-th member.
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// The position in [`Colouring::order`] of colour `k`'s first member (`k <= colours()`;
    /// `blocks()` for `k = colours()`).
    pub fn offset(&self, k: usize) -> usize {
        self.ptr[k]
    }

    /// Number of blocks coloured.
    pub fn blocks(&self) -> usize {
        self.order.len()
    }

    /// The size of the largest colour class.
    pub fn largest(&self) -> usize {
        (0..self.colours())
            .map(|k| self.members(k).len())
            .max()
            .unwrap_or(0)
    }
}
