//! Bringing up `lo` in a new network namespace, where it starts down.

use std::io;

// The request's type differs between C libraries (glibc's is unsigned
// long, musl's int).
#[allow(clippy::unnecessary_cast)]
const GET_FLAGS: libc::Ioctl = libc::SIOCGIFFLAGS as libc::Ioctl;
#[allow(clippy::unnecessary_cast)]
const SET_FLAGS: libc::Ioctl = libc::SIOCSIFFLAGS as libc::Ioctl;

/// Sets the `IFF_UP` flag of `lo` in the calling thread's network
/// namespace.
pub fn up() -> io::Result<()> {
    // Any socket carries the interface ioctls; this one is never used.
    let socket = std::net::UdpSocket::bind("0.0.0.0:0")?;
    use std::os::fd::AsRawFd;
    // SAFETY: `ifreq` is plain data, zeroed, with a NUL-terminated name;
    // the ioctls read and write only that struct, and the descriptor is a
    // socket this function owns.
    #[allow(unsafe_code)]
    unsafe {
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        if libc::ioctl(socket.as_raw_fd(), GET_FLAGS, &mut request) < 0 {
            return Err(io::Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), SET_FLAGS, &request) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
