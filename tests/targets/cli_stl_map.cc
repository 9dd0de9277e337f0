// cli_stl_map - a C++ target built with -O2 (see the Makefile): add_entry()
// leaks through std::map::insert, whose allocation sits under a chain of
// inlined STL frames (map::insert, _Rb_tree::_M_emplace_unique,
// _M_create_node, _M_get_node, allocator_traits::allocate, ...). The text
// report must still show add_entry, not hide it behind the cap of frames
// per stack (issue 16). Prints "ready"; runs until SIGTERM.
#include <csignal>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>

static std::map<unsigned long, std::string> table;

// Not inlined into main: the function the report must name.
__attribute__((noinline)) void add_entry(unsigned long key)
{
    table.insert({ key, std::string(200 + key % 64, 'v') });
}

static volatile std::sig_atomic_t stop;
static void on_term(int) { stop = 1; }

int main()
{
    std::signal(SIGTERM, on_term);
    std::printf("ready\n");
    std::fflush(stdout);
    for (unsigned long i = 0; !stop; i++) {
        add_entry(i);
        if (i % 64 == 0) {
            timespec ts = { 0, 5 * 1000 * 1000 };
            nanosleep(&ts, nullptr);
        }
    }
    return 0;
}
