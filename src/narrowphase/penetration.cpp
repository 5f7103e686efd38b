// Placeholder (being written).
#include "proxima/narrowphase/penetration.hpp"
namespace proxima {
std::string_view toString(PenetrationMethod m) {
  switch (m) {
    case PenetrationMethod::GjkTd: return "gjk-td";
    case PenetrationMethod::Nezami: return "nezami";
    case PenetrationMethod::Cundall: return "cundall";
  }
  return "?";
}
ContactResult contact(const Shape&, const Transform&, const Shape&, const Transform&, const PenetrationOptions&, ContactCache*) { return {}; }
ContactResult contact(const ContactInput& in, ContactCache* c) { return contact(*in.a, in.poseA, *in.b, in.poseB, in.options, c); }
}
