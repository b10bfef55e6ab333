use cuprum::prelude::*;

#[device]
fn parse_digit(b: u8) -> u32 {
    let d = (b as char).to_digit(10)?;
    d
}
