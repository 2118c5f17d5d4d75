//! Heap buffers aligned for O_DIRECT.

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A zero-initialized heap buffer whose start is aligned to `align` bytes (a power of two).
/// O_DIRECT needs the memory, the offset and the length aligned; this provides the memory.
///
/// A large buffer (at least [`MAP_AT_LEAST`], aligned to at most a page) is an anonymous
/// private mapping: the kernel hands out zero pages as they are first touched, so a 256 GiB
/// buffer pool costs nothing until it is used (the global allocator's aligned path would
/// write every byte, and so touch every page, to zero it).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// The allocation's layout; its size is `len` rounded up to at least 1.
    layout: Layout,
    /// `mmap`ed (released with `munmap` of `layout.size()` bytes), not from the allocator.
    mapped: bool,
}

/// Buffers at least this large are mapped rather than allocated.
pub const MAP_AT_LEAST: usize = 1 << 21;

// SAFETY: AlignedBuf owns its allocation exclusively, like Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only allow reads.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zero bytes aligned to `align`. Panics on a bad layout (a bug) and
    /// aborts on allocation failure, as Vec does.
    pub fn zeroed(len: usize, align: usize) -> Self {
        assert!(
            align.is_power_of_two(),
            "alignment {align} is not a power of two"
        );
        let layout = Layout::from_size_align(len.max(1), align).expect("valid layout");
        if len >= MAP_AT_LEAST && align <= page_size() {
            // SAFETY: an anonymous private mapping of a non-zero size at an address of the
            // kernel's choosing; it is page-aligned and reads as zeros.
            let raw = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    layout.size(),
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if raw == libc::MAP_FAILED {
                alloc::handle_alloc_error(layout)
            }
            let Some(ptr) = NonNull::new(raw.cast::<u8>()) else {
                alloc::handle_alloc_error(layout)
            };
            debug_assert_eq!(ptr.as_ptr() as usize % align, 0);
            return AlignedBuf {
                ptr,
                len,
                layout,
                mapped: true,
            };
        }
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        AlignedBuf {
            ptr,
            len,
            layout,
            mapped: false,
        }
    }

    pub fn align(&self) -> usize {
        self.layout.align()
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr points to at least len initialized bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.mapped {
            // SAFETY: mapped in `zeroed` with exactly this length; nothing borrows it now.
            let r = unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.layout.size()) };
            debug_assert_eq!(r, 0, "munmap of our own mapping");
            return;
        }
        // SAFETY: allocated in `zeroed` with this exact layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// The system's page size (4096 if it cannot be read).
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

impl Clone for AlignedBuf {
    fn clone(&self) -> Self {
        let mut b = AlignedBuf::zeroed(self.len(), self.align());
        b.copy_from_slice(self);
        b
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "AlignedBuf({} bytes, align {})",
            self.len(),
            self.align()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_is_aligned_and_zeroed() {
        for align in [512usize, 4096, 65536] {
            let b = AlignedBuf::zeroed(16384, align);
            assert_eq!(b.as_ptr() as usize % align, 0);
            assert_eq!(b.len(), 16384);
            assert!(b.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn a_large_buffer_is_mapped_aligned_zeroed_and_writable() {
        for align in [512usize, 4096] {
            let mut b = AlignedBuf::zeroed(MAP_AT_LEAST + 4096, align);
            assert!(b.mapped, "a large buffer is a mapping");
            assert_eq!(b.as_ptr() as usize % align, 0);
            assert!(b.iter().all(|&x| x == 0));
            b[MAP_AT_LEAST] = 7;
            let c = b.clone();
            assert_eq!(c[MAP_AT_LEAST], 7);
        }
        // A buffer aligned past a page is not mapped (mmap aligns to a page only).
        let b = AlignedBuf::zeroed(MAP_AT_LEAST, 1 << 16);
        assert!(!b.mapped);
        assert_eq!(b.as_ptr() as usize % (1 << 16), 0);
    }
}
