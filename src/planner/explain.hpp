#pragma once
// Why the winner wins: for each runner-up, the costs the winner saves and pays, from the
// simulated breakdowns, and the memory headroom each leaves.
#include <string>
#include <vector>

#include "planner/planner.hpp"

namespace sextant {

std::string layout_label(const Layout& layout);  // "tp8 pp16 dp128 vp2 mb1 z1 sp sel"
std::vector<std::string> explain_winner(const std::vector<Plan>& plans, std::size_t runners_up = 3);

}  // namespace sextant
