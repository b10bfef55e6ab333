//! Index checks in kernels (docs/semantics.md, row 18): the record through which a kernel reports
//! its first out-of-range index to the host, as `include/cuprum/bounds.h` declares it.
//!
//! Each module whose code checks an index holds a `__device__` pointer, [`SLOT_SYMBOL`]; the
//! runtime points it, right after loading the module, at its context's one [`OobRecord`] in mapped
//! pinned host memory, and reads the record at every synchronising call (runtime/src/bounds.rs).

/// The header's name of the slot: a variable template, `cuprum_oob_slot_v<>`, so that only a
/// module whose code checks an index has one.
pub const SLOT_NAME: &str = "cuprum_oob_slot_v";

/// The module global the runtime sets to the record's device address (`cuprum_oob_record*`):
/// the mangled name of [`SLOT_NAME`]`<void>`, the symbol `cuModuleGetGlobal` finds.
pub const SLOT_SYMBOL: &str = "_Z17cuprum_oob_slot_vIvE";

/// [`OobRecord::flag`]: no violation recorded.
pub const FLAG_EMPTY: u32 = 0;
/// [`OobRecord::flag`]: a thread is filling in the record.
pub const FLAG_WRITING: u32 = 1;
/// [`OobRecord::flag`]: the record is complete (the only state the host reads).
pub const FLAG_COMPLETE: u32 = 2;
/// [`OobRecord::info`]: the index had a signed type; `index` holds its two's-complement bits.
pub const INFO_SIGNED: u32 = 1;
/// [`OobRecord::info`]: the index was not a multiple of the alignment the access needs (a row
/// of `ldmatrix_*`, a `cp_async` operand); [`OobRecord::len`] then holds that alignment in
/// elements.
pub const INFO_MISALIGNED: u32 = 2;

/// The first out-of-range index of a context, as a kernel writes it (`struct cuprum_oob_record`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OobRecord {
    /// [`FLAG_EMPTY`], [`FLAG_WRITING`] or [`FLAG_COMPLETE`]; the host reads only a complete record.
    pub flag: u32,
    /// Facts about the index: bits [`INFO_SIGNED`] and [`INFO_MISALIGNED`].
    pub info: u32,
    /// The index that was out of range (its two's-complement bits when signed).
    pub index: u64,
    /// The length indexed (for a multi-index, the extent of the axis that was out of range); the
    /// alignment in elements for a misaligned index.
    pub len: u64,
    /// `blockIdx` (x, y, z) of the thread that made the access.
    pub block: [u32; 3],
    /// `threadIdx` (x, y, z) of the thread that made the access.
    pub thread: [u32; 3],
    /// The Rust function (kernel or `#[device]` function) holding the access, NUL-terminated.
    pub kernel: [u8; 64],
}

impl OobRecord {
    /// An empty record (flag [`FLAG_EMPTY`]).
    pub const EMPTY: OobRecord = OobRecord { flag: 0, info: 0, index: 0, len: 0, block: [0; 3], thread: [0; 3], kernel: [0; 64] };

    /// The index as Rust would print it: unsigned, or negative for a signed index type.
    pub fn index_value(&self) -> i128 {
        if self.info & INFO_SIGNED != 0 { self.index as i64 as i128 } else { self.index as i128 }
    }

    /// The function's name (up to the first NUL, at most 63 bytes).
    pub fn kernel_name(&self) -> String {
        let end = self.kernel.iter().position(|&b| b == 0).unwrap_or(self.kernel.len());
        String::from_utf8_lossy(&self.kernel[..end]).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_layout_matches_the_header() {
        assert_eq!(std::mem::size_of::<OobRecord>(), 112);
        assert_eq!(std::mem::align_of::<OobRecord>(), 8);
        let h = crate::headers::header("cuprum/bounds.h").unwrap();
        assert!(h.contains(&format!("{SLOT_NAME} = nullptr")) && h.contains("char kernel[64]"), "{h}");
        // Itanium mangling of a variable template's `<void>` specialization: `_Z`, the name's
        // length and name, `IvE`.
        assert_eq!(SLOT_SYMBOL, format!("_Z{}{SLOT_NAME}IvE", SLOT_NAME.len()));
        assert!(h.contains(SLOT_SYMBOL), "the header names the symbol the runtime looks up");
    }

    #[test]
    fn signed_indices_print_negative() {
        let mut r = OobRecord::EMPTY;
        r.index = u64::MAX;
        assert_eq!(r.index_value(), u64::MAX as i128);
        r.info = INFO_SIGNED;
        assert_eq!(r.index_value(), -1);
        r.kernel[..4].copy_from_slice(b"copy");
        assert_eq!(r.kernel_name(), "copy");
    }
}
