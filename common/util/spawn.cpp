#include "common/util/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace acme::util {

bool spawn_detached(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& log_path, std::string& error) {
    if (argv.empty()) {
        error = "spawn: no program";
        return false;
    }
    // Everything the children need is prepared before fork: after it, only async-signal-safe calls.
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    if (access(argv[0].c_str(), X_OK) != 0) {
        error = fmt::format("spawn: {} is not executable: {}", argv[0], strerror(errno));
        return false;
    }
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    int log = log_path.empty() ? -1
                               : ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (log < 0) log = devnull;
    if (devnull < 0) {
        error = fmt::format("spawn: /dev/null: {}", strerror(errno));
        return false;
    }

    const pid_t child = fork();
    if (child < 0) {
        error = fmt::format("spawn: fork: {}", strerror(errno));
        ::close(devnull);
        if (log != devnull) ::close(log);
        return false;
    }
    if (child == 0) {
        setsid();
        const pid_t grandchild = fork();
        if (grandchild != 0) _exit(grandchild < 0 ? 1 : 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // fails harmlessly for KILL/STOP
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
        syscall(SYS_close_range, 3U, ~0U, 0U);
        if (chdir("/") != 0) _exit(126);
        execve(cargv[0], cargv.data(), cenv.data());
        _exit(127);
    }
    ::close(devnull);
    if (log != devnull) ::close(log);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        error = "spawn: the intermediate child failed to fork";
        return false;
    }
    return true;
}

}  // namespace acme::util
