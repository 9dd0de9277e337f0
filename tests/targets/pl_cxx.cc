// pl_cxx.cc - a C++ target: std::vector, std::string, std::map through
// libstdc++'s operator new (libstdc++'s own GOT slots).
//   run   make_vectors: 100 x reserve(1000) ints; make_strings: 100 x 200
//         chars; make_map: 1000 nodes. All kept.
//   free  releases them all.
#include <map>
#include <string>
#include <vector>

#include "pl_common.h"

static std::vector<int> vecs[100];
static std::string strs[100];
static std::map<int, int> nodes;

__attribute__((noinline)) void make_vectors()
{
    for (auto &v : vecs)
        v.reserve(1000);
}

__attribute__((noinline)) void make_strings()
{
    for (auto &s : strs)
        s.assign(200, 'x');
}

__attribute__((noinline)) void make_map()
{
    for (int i = 0; i < 1000; i++)
        nodes[i] = i;
}

static int handle(const char *cmd, const char *)
{
    if (strcmp(cmd, "run") == 0) {
        make_vectors();
        make_strings();
        make_map();
        size_t node = sizeof(std::_Rb_tree_node<std::pair<const int, int>>);
        pl_say("truth make_vectors alloc_objs=100 alloc_bytes=%zu", 100 * 1000 * sizeof(int));
        pl_say("truth make_strings alloc_objs=100 alloc_bytes=%zu", (size_t)100 * 201);
        pl_say("truth make_map alloc_objs=1000 alloc_bytes=%zu", 1000 * node);
        pl_say("done run");
    } else if (strcmp(cmd, "free") == 0) {
        for (auto &v : vecs)
            std::vector<int>().swap(v);
        for (auto &s : strs)
            std::string().swap(s);
        nodes.clear();
        pl_say("done free");
    } else {
        return -1;
    }
    return 0;
}

int main()
{
    return pl_serve(handle);
}
