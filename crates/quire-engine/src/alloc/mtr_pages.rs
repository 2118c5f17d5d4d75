//! [`AllocPages`] through a mini-transaction: every allocation change is redo-logged, and a
//! file extension is logged as FILE_EXTEND in the same mtr (lesson 5: no fsync per extension,
//! recovery re-extends).

use std::sync::Arc;

use super::{AllocError, AllocPages, Result};
use crate::mtr::record::Record;
use crate::mtr::{Mtr, MtrError, Slot};
use crate::page::{PageId, PageNo, PageType, SpaceId};
use crate::space::Space;

/// The pages of one space's allocation metadata, latched X through `mtr` (page 0 first, which
/// serializes allocation in the space; docs/mtr.md latch rule 3).
pub struct MtrPages<'m, 'a> {
    mtr: &'m mut Mtr<'a>,
    space: Arc<Space>,
    slots: crate::hash::Map<u32, Slot>,
}

impl<'m, 'a> MtrPages<'m, 'a> {
    pub fn new(mtr: &'m mut Mtr<'a>, space: Arc<Space>) -> Self {
        MtrPages {
            mtr,
            space,
            slots: crate::hash::Map::default(),
        }
    }

    fn slot(&mut self, page: PageNo) -> Result<Slot> {
        if let Some(s) = self.slots.get(&page.0) {
            return Ok(*s);
        }
        let s = self
            .mtr
            .x_latch(PageId::new(self.space.id(), page))
            .map_err(mtr_err)?;
        self.slots.insert(page.0, s);
        Ok(s)
    }
}

fn mtr_err(e: MtrError) -> AllocError {
    match e {
        MtrError::Buffer(b) => AllocError::Buffer(b),
        other => AllocError::Mtr(other.to_string()),
    }
}

impl AllocPages for MtrPages<'_, '_> {
    fn space_id(&self) -> SpaceId {
        self.space.id()
    }
    fn read(&mut self, page: PageNo) -> Result<&[u8]> {
        let s = self.slot(page)?;
        Ok(self.mtr.page(s))
    }
    fn write(&mut self, page: PageNo, offset: usize, bytes: &[u8]) -> Result<()> {
        let s = self.slot(page)?;
        self.mtr.write(s, offset, bytes).map_err(mtr_err)
    }
    fn init_page(&mut self, page: PageNo, ty: PageType) -> Result<()> {
        let s = self
            .mtr
            .create_page(PageId::new(self.space.id(), page), ty)
            .map_err(mtr_err)?;
        self.slots.insert(page.0, s);
        Ok(())
    }
    fn extend(&mut self, pages: u32) -> Result<u32> {
        let size = self
            .space
            .extend_to_include(PageNo(pages.saturating_sub(1)))?;
        self.mtr
            .log_file_op(Record::FileExtend {
                space: self.space.id(),
                size_pages: size,
            })
            .map_err(mtr_err)?;
        Ok(size)
    }
}
