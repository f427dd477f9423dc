// robot_kinematics: imitates "roboop", the C++ robotics toolbox test
// (forward and inverse kinematics, Jacobian and torque computations on a
// matrix class in the MATLAB style of NEWMAT).
//
// A PUMA 560-like six-joint serial manipulator (standard Denavit-Hartenberg
// parameters, link masses, centres of mass and inertias) follows a smooth
// seeded joint trajectory.  At every trajectory point the program computes
// the link transforms (forward kinematics), the geometric Jacobian, the joint
// torques by recursive Newton-Euler, the joint-space inertia matrix (one
// Newton-Euler pass per joint), and solves the inverse kinematics of the pose
// from a perturbed start by Gauss-Newton.  Checks: every rotation matrix
// is orthonormal with determinant 1; the Jacobian matches a finite difference
// of the end-effector position; the torques equal M(q) qdd + h(q, qd); the
// inertia matrix is symmetric; inverse kinematics reaches the pose.
//
// Allocation behaviour: C++ new[]/delete[].  Every matrix owns a heap block of
// rows*cols doubles (24 bytes for a 3-vector, 48 for a joint vector, 72 for a
// 3x3, 128 for a 4x4, 288 and 576 for the Jacobians), and every arithmetic
// operation returns a new matrix, so the run is a stream of very many small,
// very short-lived blocks, dominated by 3-vectors, with few live at a time.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_robot_kinematics";
constexpr int kJoints = 6;
constexpr double kPi = 3.14159265358979323846;
constexpr wl::ProgramInfo kInfo{kProg,
                                "roboop-like: kinematics, Jacobians and torques of a PUMA 560 along a "
                                "trajectory, with heap-allocated matrices.",
                                "trajectory points", 60000, 1, 100000000};

std::uint64_t g_matrix_allocs = 0;

// A small dense matrix with heap storage, in the spirit of NEWMAT.
class Matrix {
 public:
  Matrix() = default;
  Matrix(int rows, int cols) : rows_(rows), cols_(cols), data_(alloc(rows * cols)) {
    for (int i = 0; i < rows * cols; ++i) data_[i] = 0.0;
  }
  Matrix(const Matrix& o) : rows_(o.rows_), cols_(o.cols_), data_(alloc(o.rows_ * o.cols_)) {
    for (int i = 0; i < rows_ * cols_; ++i) data_[i] = o.data_[i];
  }
  Matrix(Matrix&& o) noexcept : rows_(o.rows_), cols_(o.cols_), data_(o.data_) {
    o.rows_ = o.cols_ = 0;
    o.data_ = nullptr;
  }
  Matrix& operator=(Matrix o) noexcept {
    std::swap(rows_, o.rows_);
    std::swap(cols_, o.cols_);
    std::swap(data_, o.data_);
    return *this;
  }
  ~Matrix() { delete[] data_; }

  static Matrix identity(int n) {
    Matrix m(n, n);
    for (int i = 0; i < n; ++i) m(i, i) = 1.0;
    return m;
  }
  static Matrix vec3(double x, double y, double z) {
    Matrix m(3, 1);
    m.data_[0] = x;
    m.data_[1] = y;
    m.data_[2] = z;
    return m;
  }

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  double& operator()(int r, int c) { return data_[r * cols_ + c]; }
  double operator()(int r, int c) const { return data_[r * cols_ + c]; }
  double& operator[](int i) { return data_[i]; }
  double operator[](int i) const { return data_[i]; }

  Matrix t() const {
    Matrix m(cols_, rows_);
    for (int r = 0; r < rows_; ++r)
      for (int c = 0; c < cols_; ++c) m(c, r) = (*this)(r, c);
    return m;
  }
  // Sub-block [r0, r0+nr) x [c0, c0+nc).
  Matrix sub(int r0, int c0, int nr, int nc) const {
    Matrix m(nr, nc);
    for (int r = 0; r < nr; ++r)
      for (int c = 0; c < nc; ++c) m(r, c) = (*this)(r0 + r, c0 + c);
    return m;
  }
  void set_sub(int r0, int c0, const Matrix& b) {
    for (int r = 0; r < b.rows_; ++r)
      for (int c = 0; c < b.cols_; ++c) (*this)(r0 + r, c0 + c) = b(r, c);
  }
  double max_abs() const {
    double m = 0.0;
    for (int i = 0; i < rows_ * cols_; ++i) m = std::fmax(m, std::fabs(data_[i]));
    return m;
  }
  double norm() const {
    double s = 0.0;
    for (int i = 0; i < rows_ * cols_; ++i) s += data_[i] * data_[i];
    return std::sqrt(s);
  }

  friend Matrix operator+(const Matrix& a, const Matrix& b) {
    Matrix m(a.rows_, a.cols_);
    for (int i = 0; i < a.rows_ * a.cols_; ++i) m.data_[i] = a.data_[i] + b.data_[i];
    return m;
  }
  friend Matrix operator-(const Matrix& a, const Matrix& b) {
    Matrix m(a.rows_, a.cols_);
    for (int i = 0; i < a.rows_ * a.cols_; ++i) m.data_[i] = a.data_[i] - b.data_[i];
    return m;
  }
  friend Matrix operator*(double s, const Matrix& a) {
    Matrix m(a.rows_, a.cols_);
    for (int i = 0; i < a.rows_ * a.cols_; ++i) m.data_[i] = s * a.data_[i];
    return m;
  }
  friend Matrix operator*(const Matrix& a, const Matrix& b) {
    if (a.cols_ != b.rows_) wl::fail(kProg, "internal error: %dx%d * %dx%d", a.rows_, a.cols_, b.rows_, b.cols_);
    Matrix m(a.rows_, b.cols_);
    for (int r = 0; r < a.rows_; ++r)
      for (int c = 0; c < b.cols_; ++c) {
        double s = 0.0;
        for (int k = 0; k < a.cols_; ++k) s += a(r, k) * b(k, c);
        m(r, c) = s;
      }
    return m;
  }

 private:
  static double* alloc(int n) {
    ++g_matrix_allocs;
    return new double[static_cast<std::size_t>(n)];
  }
  int rows_ = 0;
  int cols_ = 0;
  double* data_ = nullptr;
};

Matrix cross(const Matrix& a, const Matrix& b) {
  return Matrix::vec3(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]);
}

double dot(const Matrix& a, const Matrix& b) {
  double s = 0.0;
  for (int i = 0; i < a.rows() * a.cols(); ++i) s += a[i] * b[i];
  return s;
}

double det3(const Matrix& m) {
  return m(0, 0) * (m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1)) - m(0, 1) * (m(1, 0) * m(2, 2) - m(1, 2) * m(2, 0)) +
         m(0, 2) * (m(1, 0) * m(2, 1) - m(1, 1) * m(2, 0));
}

// Solves a x = b (a square) by Gaussian elimination with partial pivoting.
Matrix solve(Matrix a, Matrix b) {
  const int n = a.rows();
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int r = k + 1; r < n; ++r)
      if (std::fabs(a(r, k)) > std::fabs(a(p, k))) p = r;
    if (std::fabs(a(p, k)) < 1e-300) wl::fail(kProg, "singular system in solve");
    if (p != k) {
      for (int c = 0; c < n; ++c) std::swap(a(k, c), a(p, c));
      std::swap(b[k], b[p]);
    }
    for (int r = k + 1; r < n; ++r) {
      const double f = a(r, k) / a(k, k);
      for (int c = k; c < n; ++c) a(r, c) -= f * a(k, c);
      b[r] -= f * b[k];
    }
  }
  Matrix x(n, 1);
  for (int r = n - 1; r >= 0; --r) {
    double s = b[r];
    for (int c = r + 1; c < n; ++c) s -= a(r, c) * x[c];
    x[r] = s / a(r, r);
  }
  return x;
}

// ---------------------------------------------------------------------------
// The manipulator.

struct Link {
  double d, a, alpha;  // standard DH parameters (theta is the joint variable)
  double mass;
  double rc[3];   // centre of mass in the link frame
  double inertia[3];  // principal moments about the centre of mass, link frame
};

// PUMA 560 (standard DH, as in the robotics toolboxes).
const Link kPuma[kJoints] = {
    {0.0, 0.0, kPi / 2, 0.0, {0.0, 0.0, 0.0}, {0.0, 0.35, 0.0}},
    {0.0, 0.4318, 0.0, 17.4, {-0.3638, 0.006, 0.2275}, {0.13, 0.524, 0.539}},
    {0.15005, 0.0203, -kPi / 2, 4.8, {-0.0203, -0.0141, 0.070}, {0.066, 0.086, 0.0125}},
    {0.4318, 0.0, kPi / 2, 0.82, {0.0, 0.019, 0.0}, {1.8e-3, 1.3e-3, 1.8e-3}},
    {0.0, 0.0, -kPi / 2, 0.34, {0.0, 0.0, 0.0}, {0.3e-3, 0.4e-3, 0.3e-3}},
    {0.0, 0.0, 0.0, 0.09, {0.0, 0.0, 0.032}, {0.15e-3, 0.15e-3, 0.04e-3}},
};

// Homogeneous transform of one link: Rz(theta) Tz(d) Tx(a) Rx(alpha).
Matrix dh_transform(const Link& l, double theta) {
  const double ct = std::cos(theta), st = std::sin(theta);
  const double ca = std::cos(l.alpha), sa = std::sin(l.alpha);
  Matrix m(4, 4);
  m(0, 0) = ct;
  m(0, 1) = -st * ca;
  m(0, 2) = st * sa;
  m(0, 3) = l.a * ct;
  m(1, 0) = st;
  m(1, 1) = ct * ca;
  m(1, 2) = -ct * sa;
  m(1, 3) = l.a * st;
  m(2, 1) = sa;
  m(2, 2) = ca;
  m(2, 3) = l.d;
  m(3, 3) = 1.0;
  return m;
}

// Transforms of frames 0..6 in the base frame (frame 0 = identity).
struct Kinematics {
  Matrix frame[kJoints + 1];
};

Kinematics forward_kinematics(const Matrix& q) {
  Kinematics k;
  k.frame[0] = Matrix::identity(4);
  for (int i = 0; i < kJoints; ++i) k.frame[i + 1] = k.frame[i] * dh_transform(kPuma[i], q[i]);
  return k;
}

Matrix rotation(const Matrix& t) { return t.sub(0, 0, 3, 3); }
Matrix position(const Matrix& t) { return t.sub(0, 3, 3, 1); }

// Geometric Jacobian (rows: linear velocity, angular velocity).
Matrix jacobian(const Kinematics& k) {
  Matrix j(6, kJoints);
  const Matrix pn = position(k.frame[kJoints]);
  for (int i = 0; i < kJoints; ++i) {
    const Matrix z = k.frame[i].sub(0, 2, 3, 1);
    j.set_sub(0, i, cross(z, pn - position(k.frame[i])));
    j.set_sub(3, i, z);
  }
  return j;
}

// Recursive Newton-Euler inverse dynamics in the base frame.
Matrix rne(const Kinematics& k, const Matrix& qd, const Matrix& qdd, double gravity) {
  Matrix w = Matrix::vec3(0, 0, 0);
  Matrix wd = Matrix::vec3(0, 0, 0);
  Matrix vd = Matrix::vec3(0, 0, gravity);  // base acceleration = -g
  Matrix f[kJoints], n[kJoints], pc[kJoints];
  for (int i = 0; i < kJoints; ++i) {
    const Matrix z = k.frame[i].sub(0, 2, 3, 1);
    const Matrix r = rotation(k.frame[i + 1]);
    const Matrix p = position(k.frame[i + 1]) - position(k.frame[i]);
    const Matrix w_prev = w;
    w = w_prev + qd[i] * z;
    wd = wd + qdd[i] * z + qd[i] * cross(w_prev, z);
    vd = vd + cross(wd, p) + cross(w, cross(w, p));
    const Matrix rc = r * Matrix::vec3(kPuma[i].rc[0], kPuma[i].rc[1], kPuma[i].rc[2]);
    const Matrix vc = vd + cross(wd, rc) + cross(w, cross(w, rc));
    Matrix ic(3, 3);
    for (int d = 0; d < 3; ++d) ic(d, d) = kPuma[i].inertia[d];
    const Matrix i_base = r * ic * r.t();
    f[i] = kPuma[i].mass * vc;
    n[i] = i_base * wd + cross(w, i_base * w);
    pc[i] = position(k.frame[i + 1]) + rc;
  }
  Matrix tau(kJoints, 1);
  Matrix fi = Matrix::vec3(0, 0, 0);
  Matrix ni = Matrix::vec3(0, 0, 0);
  for (int i = kJoints - 1; i >= 0; --i) {
    // Force and moment (about o_i) that link i-1 exerts on link i, in the
    // base frame; ni arrives as the moment about o_{i+1} of the outer links.
    const Matrix oi = position(k.frame[i]);
    const Matrix oi1 = position(k.frame[i + 1]);
    ni = ni + cross(oi1 - oi, fi) + n[i] + cross(pc[i] - oi, f[i]);
    fi = fi + f[i];
    tau[i] = dot(ni, k.frame[i].sub(0, 2, 3, 1));
  }
  return tau;
}

// Jacobian of the inverse-kinematics residual [p; columns of R] (12 x 6):
// joint i turns every column c of R with angular velocity z_i.
Matrix pose_jacobian(const Kinematics& k) {
  Matrix j(12, kJoints);
  const Matrix pn = position(k.frame[kJoints]);
  for (int i = 0; i < kJoints; ++i) {
    const Matrix z = k.frame[i].sub(0, 2, 3, 1);
    j.set_sub(0, i, cross(z, pn - position(k.frame[i])));
    for (int c = 0; c < 3; ++c) j.set_sub(3 + 3 * c, i, cross(z, k.frame[kJoints].sub(0, c, 3, 1)));
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);

  // Trajectory q_i(t) = c_i + A_i sin(w_i t + phi_i).  Shoulder, elbow and
  // wrist stay in ranges free of singularities (|det J| > 0.005 there), so
  // inverse kinematics converges from every start.
  double centre[kJoints], amp[kJoints], freq[kJoints], phase[kJoints];
  for (int i = 0; i < kJoints; ++i) {
    centre[i] = rng.uniform(-1.0, 1.0);
    amp[i] = rng.uniform(0.2, 0.8);
    freq[i] = rng.uniform(0.5, 2.0);
    phase[i] = rng.uniform(0.0, 2.0 * kPi);
  }
  centre[1] = rng.uniform(-1.0, -0.5);  // q2 in [-1.35, -0.15]
  amp[1] = rng.uniform(0.1, 0.35);
  centre[2] = rng.uniform(-0.5, 0.3);  // q3 in [-1.05, 0.85]
  amp[2] = rng.uniform(0.1, 0.55);
  centre[4] = rng.uniform(0.9, 1.3);  // q5 in [0.5, 1.7]
  amp[4] = rng.uniform(0.1, 0.4);
  constexpr double kGravity = 9.81;
  constexpr double kTimeStep = 0.01;
  constexpr double kFdStep = 1e-6;

  double max_ortho = 0.0, max_jac = 0.0, max_dyn = 0.0, max_sym = 0.0, max_ik = 0.0;
  double path_length = 0.0;
  double max_tau[kJoints] = {};
  std::uint64_t ik_iterations = 0;
  wl::Checksum check;
  Matrix prev_p;

  for (std::uint64_t s = 0; s < opt.size; ++s) {
    const double t = static_cast<double>(s) * kTimeStep;
    Matrix q(kJoints, 1), qd(kJoints, 1), qdd(kJoints, 1);
    for (int i = 0; i < kJoints; ++i) {
      const double ph = freq[i] * t + phase[i];
      q[i] = centre[i] + amp[i] * std::sin(ph);
      qd[i] = amp[i] * freq[i] * std::cos(ph);
      qdd[i] = -amp[i] * freq[i] * freq[i] * std::sin(ph);
    }

    // Forward kinematics and orthonormality.
    const Kinematics k = forward_kinematics(q);
    for (int i = 1; i <= kJoints; ++i) {
      const Matrix r = rotation(k.frame[i]);
      const double ortho = (r.t() * r - Matrix::identity(3)).max_abs();
      const double det_err = std::fabs(det3(r) - 1.0);
      max_ortho = std::fmax(max_ortho, std::fmax(ortho, det_err));
    }
    const Matrix p = position(k.frame[kJoints]);
    if (s > 0) path_length += (p - prev_p).norm();
    prev_p = p;

    // Jacobian against a central finite difference of the position.
    const Matrix j = jacobian(k);
    {
      const Matrix p_plus = position(forward_kinematics(q + kFdStep * qd).frame[kJoints]);
      const Matrix p_minus = position(forward_kinematics(q - kFdStep * qd).frame[kJoints]);
      const Matrix v_fd = (1.0 / (2.0 * kFdStep)) * (p_plus - p_minus);
      const Matrix v_j = (j * qd).sub(0, 0, 3, 1);
      max_jac = std::fmax(max_jac, (v_fd - v_j).max_abs() / std::fmax(1.0, v_j.max_abs()));
    }

    // Dynamics: tau = M(q) qdd + h(q, qd).
    const Matrix tau = rne(k, qd, qdd, kGravity);
    const Matrix h = rne(k, qd, Matrix(kJoints, 1), kGravity);
    Matrix m(kJoints, kJoints);
    for (int c = 0; c < kJoints; ++c) {
      Matrix e(kJoints, 1);
      e[c] = 1.0;
      m.set_sub(0, c, rne(k, Matrix(kJoints, 1), e, 0.0));
    }
    max_sym = std::fmax(max_sym, (m - m.t()).max_abs());
    max_dyn = std::fmax(max_dyn, (m * qdd + h - tau).max_abs() / std::fmax(1.0, tau.max_abs()));
    for (int i = 0; i < kJoints; ++i) {
      max_tau[i] = std::fmax(max_tau[i], std::fabs(tau[i]));
      check.add_signed(std::llround(tau[i] * 1e4));
    }

    // Inverse kinematics of the pose from a perturbed start (Gauss-Newton on
    // the residual [p_goal - p; columns of R_goal - R]).
    {
      const Matrix& t_goal = k.frame[kJoints];
      Matrix qi = q;
      for (int i = 0; i < kJoints; ++i) qi[i] += rng.uniform(-0.05, 0.05);
      double err = 1.0;
      int it = 0;
      for (; it < 30; ++it) {
        const Kinematics ki = forward_kinematics(qi);
        Matrix e(12, 1);
        e.set_sub(0, 0, p - position(ki.frame[kJoints]));
        for (int c = 0; c < 3; ++c) e.set_sub(3 + 3 * c, 0, t_goal.sub(0, c, 3, 1) - ki.frame[kJoints].sub(0, c, 3, 1));
        err = e.max_abs();
        if (err < 1e-12) break;
        const Matrix jp = pose_jacobian(ki);
        const Matrix jt = jp.t();
        qi = qi + solve(jt * jp, jt * e);
      }
      ik_iterations += static_cast<std::uint64_t>(it);
      max_ik = std::fmax(max_ik, err);
    }
  }

  if (max_ortho > 1e-12) wl::fail(kProg, "rotation matrix not orthonormal: error %.3e", max_ortho);
  if (max_jac > 1e-6) wl::fail(kProg, "Jacobian disagrees with finite differences: error %.3e", max_jac);
  if (max_dyn > 1e-9) wl::fail(kProg, "torques != M qdd + h: relative error %.3e", max_dyn);
  if (max_sym > 1e-12) wl::fail(kProg, "inertia matrix not symmetric: error %.3e", max_sym);
  if (max_ik > 1e-12) wl::fail(kProg, "inverse kinematics did not converge: pose error %.3e", max_ik);

  if (opt.verbose) {
    std::fprintf(stderr, "%s: %llu matrix blocks allocated; errors: ortho %.2e jac %.2e dyn %.2e sym %.2e ik %.2e\n",
                 kProg, static_cast<unsigned long long>(g_matrix_allocs), max_ortho, max_jac, max_dyn, max_sym,
                 max_ik);
  }
  std::printf("robot: PUMA 560, %llu trajectory points, %.2f s of motion\n",
              static_cast<unsigned long long>(opt.size), static_cast<double>(opt.size) * kTimeStep);
  std::printf("checks passed: orthonormal rotations, Jacobian vs finite differences, tau = M qdd + h, "
              "symmetric M, inverse kinematics\n");
  std::printf("end-effector path length: %.4f m; inverse kinematics: %llu Gauss-Newton steps\n", path_length,
              static_cast<unsigned long long>(ik_iterations));
  std::printf("max |torque| (N m):");
  for (double v : max_tau) std::printf(" %.4g", v);
  std::printf("\n");
  wl::print_result_hex(check.value());
  return 0;
}
