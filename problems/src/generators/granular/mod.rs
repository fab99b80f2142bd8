//! Granular-dynamics time stepper (rigid spheres) that generates LCP and CCP instances.
