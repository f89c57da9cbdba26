pub mod calc;

#[cfg(test)]
mod tests {
    use crate::calc::{add, mul, sub};

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn multiplies() {
        assert_eq!(mul(4, 5), 20);
    }

    #[test]
    fn subtracts() {
        assert_eq!(sub(7, 2), 5);
    }
}
