#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xfn_tests::fuzz::proto_wit_roundtrip(data));
