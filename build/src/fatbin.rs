//! Reading which targets a fat binary holds: `cuprum_abi::fatbin`, the reader the runtime uses too
//! (re-exported here under the build crate's old path).

pub use cuprum_abi::fatbin::*;
