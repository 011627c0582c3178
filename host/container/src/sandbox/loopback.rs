//! Bringing up `lo` in a new network namespace, where it starts down.

use std::io;

/// Sets the `IFF_UP` flag of `lo` in the calling thread's network
/// namespace.
pub fn up() -> io::Result<()> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").or_else(|_| {
        // Binding needs an address; a namespace's lo has one even down.
        std::net::UdpSocket::bind("127.0.0.1:0")
    });
    let socket = match socket {
        Ok(s) => s,
        Err(e) => return Err(e),
    };
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
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) < 0 {
            return Err(io::Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &request) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
