//! The terminal's echo while Mira prints an answer: what the user types ahead must not land
//! in the middle of the streamed text (it waits for the next prompt instead).

/// Restores the terminal's echo setting when dropped. Does nothing when stdin is no terminal.
pub(crate) struct Echo {
    saved: Option<libc::termios>,
}

impl Echo {
    fn set(on: bool) -> Echo {
        // SAFETY: tcgetattr/tcsetattr on stdin with a termios on the stack; a descriptor
        // that is not a terminal makes them fail, and then nothing is changed.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::isatty(libc::STDIN_FILENO) != 1
                || libc::tcgetattr(libc::STDIN_FILENO, &mut t) != 0
            {
                return Echo { saved: None };
            }
            let saved = t;
            if on {
                t.c_lflag |= libc::ECHO;
            } else {
                t.c_lflag &= !libc::ECHO;
            }
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &t);
            Echo { saved: Some(saved) }
        }
    }

    /// Typed keys are not shown until dropped (while an answer streams).
    pub(crate) fn off() -> Echo {
        Echo::set(false)
    }

    /// Typed keys are shown until dropped (a confirmation inside a turn).
    pub(crate) fn on() -> Echo {
        Echo::set(true)
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        if let Some(t) = self.saved {
            // SAFETY: restores the settings read in `set`.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &t) };
        }
    }
}
