package demo;
public class Calc {
    public int add(int a, int b) { return a + b; }
    public int sub(int a, int b) { return a + b; }
}
