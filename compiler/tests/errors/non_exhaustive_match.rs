use cuprum::prelude::*;

#[elementwise]
pub fn grade(score: u8) -> u8 {
    match score {
        90..=100 => 4,
        80..90 => 3,
        0..80 => 2,
    }
}
