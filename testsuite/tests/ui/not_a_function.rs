use cuprum::prelude::*;

#[rawkernel]
pub struct NotAKernel;

fn main() {}
